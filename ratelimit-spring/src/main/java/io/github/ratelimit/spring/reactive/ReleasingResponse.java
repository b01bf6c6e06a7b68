package io.github.ratelimit.spring.reactive;

import java.io.File;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.ZeroCopyHttpOutputMessage;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;

/**
 * A response that releases the exchange's permits before the client can see it end: before the single buffer, the
 * chunk completing the {@code Content-Length}, or completion; after the last chunk of a body of unknown length.
 */
class ReleasingResponse extends ServerHttpResponseDecorator {

	final Supplier<Mono<Void>> release;

	ReleasingResponse(ServerHttpResponse delegate, Supplier<Mono<Void>> release) {
		super(delegate);
		this.release = release;
	}

	/** A response that runs {@code release} (which must tolerate running twice) before the client can see it end. */
	static ServerHttpResponse of(ServerHttpResponse delegate, Supplier<Mono<Void>> release) {
		return (delegate instanceof ZeroCopyHttpOutputMessage) ? new ZeroCopy(delegate, release)
				: new ReleasingResponse(delegate, release);
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		if (body instanceof Mono<? extends DataBuffer> single) {
			Mono<DataBuffer> released = Mono.<DataBuffer>from(single)
				.delayUntil((buffer) -> this.release.get())
				.switchIfEmpty(Mono.defer(() -> this.release.get().then(Mono.empty())));
			return super.writeWith(released);
		}
		Flux<DataBuffer> chunks = Flux.from(body);
		long length = getHeaders().getContentLength();
		if (length > 0) {
			// the chunk that completes the declared length ends the response for the client: it waits for the release
			AtomicLong written = new AtomicLong();
			chunks = chunks.concatMap((buffer) -> (written.addAndGet(buffer.readableByteCount()) >= length)
					? this.release.get().thenReturn(buffer) : Mono.just(buffer));
		}
		return super.writeWith(chunks.concatWith(Mono.defer(() -> this.release.get().then(Mono.empty()))));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		Flux<Publisher<? extends DataBuffer>> chunks = Flux.from(body);
		return super.writeAndFlushWith(chunks.concatWith(Mono.defer(() -> this.release.get().then(Mono.empty()))));
	}

	@Override
	public Mono<Void> setComplete() {
		return Mono.defer(this.release).then(super.setComplete());
	}

	/** For responses that can send files without copying them (the file is sent after the release). */
	private static final class ZeroCopy extends ReleasingResponse implements ZeroCopyHttpOutputMessage {

		ZeroCopy(ServerHttpResponse delegate, Supplier<Mono<Void>> release) {
			super(delegate, release);
		}

		@Override
		public Mono<Void> writeWith(Path file, long position, long count) {
			ZeroCopyHttpOutputMessage delegate = (ZeroCopyHttpOutputMessage) getDelegate();
			return Mono.defer(this.release).then(delegate.writeWith(file, position, count));
		}

		@Override
		public Mono<Void> writeWith(File file, long position, long count) {
			return writeWith(file.toPath(), position, count);
		}

	}

}
