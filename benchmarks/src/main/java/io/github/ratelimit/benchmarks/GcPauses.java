package io.github.ratelimit.benchmarks;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

import com.sun.management.GarbageCollectionNotificationInfo;

/**
 * The JVM's garbage-collection pauses while it listens: a pause stops every thread, so a decision in flight during a
 * pause as long as the limiter's budget times out though Redis answered. Concurrent collector cycles are not pauses
 * and are left out.
 */
final class GcPauses implements AutoCloseable {

	private final List<Long> pauseMillis = new ArrayList<>();

	private final NotificationListener listener = this::onNotification;

	private final List<NotificationEmitter> emitters = new ArrayList<>();

	GcPauses() {
		for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
			if (collector instanceof NotificationEmitter emitter) {
				emitter.addNotificationListener(this.listener, null, null);
				this.emitters.add(emitter);
			}
		}
	}

	private void onNotification(Notification notification, Object handback) {
		if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
			return;
		}
		GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo
			.from((CompositeData) notification.getUserData());
		if (info.getGcName().contains("Concurrent") || info.getGcName().contains("Cycles")) {
			return;
		}
		synchronized (this.pauseMillis) {
			this.pauseMillis.add(info.getGcInfo().getDuration());
		}
	}

	/** Forgets the pauses so far. */
	void reset() {
		synchronized (this.pauseMillis) {
			this.pauseMillis.clear();
		}
	}

	/** How many pauses so far. */
	int count() {
		synchronized (this.pauseMillis) {
			return this.pauseMillis.size();
		}
	}

	/** The longest pause so far, in milliseconds. */
	long longestMillis() {
		synchronized (this.pauseMillis) {
			return this.pauseMillis.stream().mapToLong(Long::longValue).max().orElse(0);
		}
	}

	@Override
	public void close() {
		for (NotificationEmitter emitter : this.emitters) {
			try {
				emitter.removeNotificationListener(this.listener);
			}
			catch (ListenerNotFoundException ex) {
				// not registered: nothing to remove
			}
		}
	}

}
