package io.github.ratelimit.spring.reactive;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.mock.http.server.reactive.MockServerHttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the permits are released relative to the chunks a client receives.
 */
class ReleasingResponseTests {

	private final List<String> events = new CopyOnWriteArrayList<>();

	private final AtomicBoolean released = new AtomicBoolean();

	@Test
	void aStreamedBodyOfKnownLengthReleasesBeforeTheChunkThatCompletesIt() {
		ServerHttpResponse response = ReleasingResponse.of(recording(), this::release);
		response.getHeaders().setContentLength(6);
		response.writeWith(Flux.just(buffer("abc"), buffer("def"))).block();
		assertThat(this.events).containsExactly("write abc", "release", "write def");
	}

	@Test
	void aStreamedBodyOfUnknownLengthReleasesAfterItsLastChunk() {
		ServerHttpResponse response = ReleasingResponse.of(recording(), this::release);
		response.writeWith(Flux.just(buffer("abc"), buffer("def"))).block();
		assertThat(this.events).containsExactly("write abc", "write def", "release");
	}

	@Test
	void aSingleBufferIsHeldUntilTheRelease() {
		ServerHttpResponse response = ReleasingResponse.of(recording(), this::release);
		response.writeWith(Mono.just(buffer("abc"))).block();
		assertThat(this.events).containsExactly("release", "write abc");
	}

	/** Like the real releases: only the first one does anything. */
	private Mono<Void> release() {
		return Mono.fromRunnable(() -> {
			if (this.released.compareAndSet(false, true)) {
				this.events.add("release");
			}
		});
	}

	private ServerHttpResponse recording() {
		return new ServerHttpResponseDecorator(new MockServerHttpResponse()) {

			@Override
			public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
				return super.writeWith(Flux.from(body)
					.doOnNext((buffer) -> ReleasingResponseTests.this.events
						.add("write " + buffer.toString(StandardCharsets.UTF_8))));
			}

		};
	}

	private static DataBuffer buffer(String text) {
		return DefaultDataBufferFactory.sharedInstance.wrap(text.getBytes(StandardCharsets.UTF_8));
	}

}
