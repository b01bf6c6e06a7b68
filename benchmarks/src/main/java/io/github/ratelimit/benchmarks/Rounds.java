package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.DoubleFunction;
import java.util.function.IntToDoubleFunction;

/**
 * Measurements repeated in rounds, the contenders taking turns in an order rotated from one round to the next: a
 * round's ratio pairs two measurements taken seconds apart, so that the machine's drift over a run moves single
 * rounds rather than the result, which is the median of the rounds' ratios. The order of a round, and the medians
 * and ranges the tables report (sections 1, 1b, 1c and 8).
 */
final class Rounds {

	private Rounds() {
	}

	/**
	 * The order in which the contenders run in a round: the list started {@code round} places further on, wrapping
	 * around, so that every contender moves one place ahead from one round to the next.
	 * @param <T> the contenders' type
	 * @param contenders the contenders in their declared order (round 0)
	 * @param round the round, from 0
	 * @return the contenders in that round's order
	 */
	static <T> List<T> rotated(List<T> contenders, int round) {
		List<T> order = new ArrayList<>(contenders.size());
		for (int i = 0; i < contenders.size(); i++) {
			order.add(contenders.get((i + round) % contenders.size()));
		}
		return order;
	}

	/**
	 * The median, the mean of the two middle values for an even count, NaN for none.
	 * @param values the values, left unchanged
	 * @return their median
	 */
	static double median(double[] values) {
		if (values.length == 0) {
			return Double.NaN;
		}
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		int n = sorted.length;
		return (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	}

	/**
	 * One figure over another, round by round.
	 * @param rounds the number of rounds
	 * @param numerator the numerator's figure in a round
	 * @param denominator the denominator's figure in the same round
	 * @return the ratio of each round
	 */
	static double[] ratios(int rounds, IntToDoubleFunction numerator, IntToDoubleFunction denominator) {
		double[] ratios = new double[rounds];
		for (int round = 0; round < rounds; round++) {
			ratios[round] = numerator.applyAsDouble(round) / denominator.applyAsDouble(round);
		}
		return ratios;
	}

	static double lowest(double[] values) {
		return Arrays.stream(values).min().orElse(Double.NaN);
	}

	static double highest(double[] values) {
		return Arrays.stream(values).max().orElse(Double.NaN);
	}

	/**
	 * The spread of the rounds for a table: "one round", or the lowest to the highest.
	 * @param values each round's value
	 * @param format how a value is printed
	 * @return the range
	 */
	static String range(double[] values, DoubleFunction<String> format) {
		if (values.length == 0) {
			return "n/a";
		}
		if (values.length == 1) {
			return "one round";
		}
		return format.apply(lowest(values)) + " to " + format.apply(highest(values));
	}

}
