package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The headline figures of every section's latest run, kept in {@code results/figures.properties} next to the
 * sections' tables: what {@link Targets} judges and what the prose of {@code RESULTS.md} quotes. A run of some
 * sections replaces those sections' figures and keeps the others'.
 */
final class Figures {

	private final Path file;

	private final Map<String, String> values = new TreeMap<>();

	private Figures(Path file) {
		this.file = file;
	}

	/**
	 * The figures stored in a directory's {@code figures.properties}, none if there is no such file.
	 * @param directory the results directory
	 * @return the figures
	 */
	static Figures load(Path directory) {
		Figures figures = new Figures(directory.resolve("figures.properties"));
		if (Files.exists(figures.file)) {
			try {
				for (String line : Files.readAllLines(figures.file)) {
					int at = line.indexOf('=');
					if (!line.startsWith("#") && at > 0) {
						figures.values.put(line.substring(0, at), line.substring(at + 1));
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		return figures;
	}

	/**
	 * Forgets the figures of a section that is about to run again.
	 * @param section the section's prefix, such as {@code engine}
	 */
	void clear(String section) {
		this.values.keySet().removeIf((key) -> key.startsWith(section + "."));
	}

	Figures put(String key, double value) {
		this.values.put(key, Double.toString(value));
		return this;
	}

	Figures put(String key, String value) {
		this.values.put(key, value.replace('\n', ' '));
		return this;
	}

	/** The figure as stored, or null. */
	String text(String key) {
		return this.values.get(key);
	}

	/**
	 * A number, NaN when it was not measured.
	 * @param key the figure's key
	 * @return its value
	 */
	double number(String key) {
		String value = this.values.get(key);
		if (value == null) {
			return Double.NaN;
		}
		try {
			return Double.parseDouble(value);
		}
		catch (NumberFormatException ex) {
			return Double.NaN;
		}
	}

	boolean has(String key) {
		return this.values.containsKey(key);
	}

	/**
	 * Every key under a prefix, in order.
	 * @param prefix the keys' start
	 * @return the keys
	 */
	List<String> keys(String prefix) {
		List<String> keys = new ArrayList<>();
		this.values.keySet().stream().filter((key) -> key.startsWith(prefix)).forEach(keys::add);
		return keys;
	}

	void save() {
		StringBuilder out = new StringBuilder(
				"# Written by the benchmarks (BenchmarkMain): the headline figures of each section's latest run.\n");
		this.values.forEach((key, value) -> out.append(key).append('=').append(value).append('\n'));
		try {
			Files.writeString(this.file, out);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** A mode's or a label's name as a key part: lower case, blanks as dashes. */
	static String part(String name) {
		return name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.]+", "-").replaceAll("(^-|-$)", "");
	}

	static String percent(double ratio) {
		return Double.isNaN(ratio) ? "n/a" : String.format(Locale.ROOT, "%.0f%%", 100 * ratio);
	}

	static String times(double ratio) {
		return Double.isNaN(ratio) ? "n/a" : String.format(Locale.ROOT, "%.2fx", ratio);
	}

}
