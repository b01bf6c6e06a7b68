package io.github.ratelimit.core;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Space-Saving's guarantees on streams with a known truth: at most {@code capacity} counters, every count at least the
 * item's true count and at most {@code total / capacity} above it, and every item seen more than
 * {@code total / capacity} times kept.
 */
class HeavyHittersTests {

	@Test
	void keepsEveryTrueHeavyHitterWithinTheErrorBoundWhateverTheOrder() {
		for (long seed = 1; seed <= 20; seed++) {
			Random random = new Random(seed);
			int capacity = 16;
			HeavyHitters summary = new HeavyHitters(capacity);
			Map<String, Long> truth = new HashMap<>();
			int total = 50_000;
			for (int i = 0; i < total; i++) {
				// a few heavy items (Zipf-like) among many that occur once or twice
				String item = (random.nextInt(10) < 3) ? "heavy-" + random.nextInt(5) : "tail-" + random.nextInt(20_000);
				summary.add(item);
				truth.merge(item, 1L, Long::sum);
			}
			long bound = total / capacity;
			assertThat(summary.size()).isLessThanOrEqualTo(capacity);
			assertThat(summary.total()).isEqualTo(total);
			List<HeavyHitters.Counted> items = summary.items();
			for (HeavyHitters.Counted counted : items) {
				long real = truth.get(counted.item());
				assertThat(counted.count()).as(counted.item()).isGreaterThanOrEqualTo(real);
				assertThat(counted.count() - counted.error()).as(counted.item()).isLessThanOrEqualTo(real);
				assertThat(counted.count() - real).as(counted.item()).isLessThanOrEqualTo(bound);
			}
			List<String> kept = items.stream().map(HeavyHitters.Counted::item).toList();
			truth.forEach((item, count) -> {
				if (count > bound) {
					assertThat(kept).as("%s seen %d times", item, count).contains(item);
				}
			});
			assertThat(items.get(0).item()).startsWith("heavy-");
		}
	}

	@Test
	void anItemArrivingLastAfterAFloodOfDistinctOnesIsStillFirstWhenItIsHeavy() {
		HeavyHitters summary = new HeavyHitters(8);
		for (int i = 0; i < 1_000; i++) {
			summary.add("quiet-" + i);
		}
		for (int i = 0; i < 200; i++) {
			summary.add("hot");
		}
		// hot is 200 of 1,200: above 1,200 / 8 = 150, so kept, and its count bounds the others'
		assertThat(summary.items().get(0).item()).isEqualTo("hot");
		assertThat(summary.items().get(0).count()).isBetween(200L, 200L + 1_200 / 8);
		assertThat(summary.size()).isEqualTo(8);
	}

	@Test
	void removedItemsLeaveTheTotalAndTheCounters() {
		HeavyHitters summary = new HeavyHitters(4);
		summary.add("a");
		summary.add("a");
		summary.add("b");
		summary.removeIf("a"::equals);
		assertThat(summary.total()).isEqualTo(1);
		assertThat(summary.items()).extracting(HeavyHitters.Counted::item).containsExactly("b");
		assertThat(summary.floor()).isZero();
	}

	@Test
	void aCapacityBelowOneIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> new HeavyHitters(0)).withMessageContaining("capacity");
	}

	@Test
	void aCounterCarriesTheTagOfItsItemsLastAddition() {
		HeavyHitters summary = new HeavyHitters(2);
		summary.add("a", "gold");
		summary.add("a", "silver");
		summary.add("b", "gold");
		summary.add("b");
		summary.add("b");
		// c takes a's counter (the smallest), never a's tag
		summary.add("c", "bronze");
		assertThat(summary.items()).containsExactly(new HeavyHitters.Counted("b", 3, 0, null),
				new HeavyHitters.Counted("c", 3, 2, "bronze"));
	}

}
