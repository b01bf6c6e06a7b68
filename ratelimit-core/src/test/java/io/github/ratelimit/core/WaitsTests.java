package io.github.ratelimit.core;

import java.io.IOException;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link Waits#await} answers a value held already (a scalar {@code Mono}) without subscribing, and the same way as it
 * answers one it waits for ({@code hide()} keeps a {@code Mono} from being seen as scalar).
 */
class WaitsTests {

	@Test
	void aValueOrNothingIsAnsweredAsWaitedFor() {
		assertThat(Waits.await(Mono.just("value"))).isEqualTo("value");
		assertThat(Waits.await(Mono.just("value").hide())).isEqualTo("value");
		assertThat((Object) Waits.await(Mono.empty())).isNull();
		assertThat((Object) Waits.await(Mono.empty().hide())).isNull();
	}

	@Test
	void anUncheckedFailureIsRethrownAsItIs() {
		AssertionError error = new AssertionError("an Error");
		assertThatThrownBy(() -> Waits.await(Mono.error(error))).isSameAs(error);
		assertThatThrownBy(() -> Waits.await(Mono.error(error).hide())).isSameAs(error);
		IllegalArgumentException runtime = new IllegalArgumentException("unchecked");
		assertThatThrownBy(() -> Waits.await(Mono.error(runtime))).isSameAs(runtime);
		assertThatThrownBy(() -> Waits.await(Mono.error(runtime).hide())).isSameAs(runtime);
	}

	@Test
	void aCheckedFailureIsRethrownInAnIllegalStateException() {
		IOException checked = new IOException("checked");
		assertThatThrownBy(() -> Waits.await(Mono.error(checked))).isInstanceOf(IllegalStateException.class)
			.hasCause(checked);
		assertThatThrownBy(() -> Waits.await(Mono.error(checked).hide())).isInstanceOf(IllegalStateException.class)
			.hasCause(checked);
	}

}
