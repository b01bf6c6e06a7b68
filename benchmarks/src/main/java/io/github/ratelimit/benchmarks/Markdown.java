package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A markdown table.
 */
final class Markdown {

	private final List<String> header;

	private final List<List<String>> rows = new ArrayList<>();

	Markdown(String... header) {
		this.header = List.of(header);
	}

	Markdown row(Object... cells) {
		List<String> row = new ArrayList<>();
		for (Object cell : cells) {
			row.add(format(cell));
		}
		this.rows.add(row);
		return this;
	}

	static String format(Object cell) {
		if (cell instanceof Double value) {
			double abs = Math.abs(value);
			if (abs >= 100) {
				return String.format(Locale.ROOT, "%,.0f", value);
			}
			return String.format(Locale.ROOT, abs >= 10 ? "%.1f" : "%.2f", value);
		}
		return String.valueOf(cell);
	}

	@Override
	public String toString() {
		StringBuilder out = new StringBuilder();
		out.append("| ").append(String.join(" | ", this.header)).append(" |\n");
		out.append("|").append("---|".repeat(this.header.size())).append('\n');
		for (List<String> row : this.rows) {
			out.append("| ").append(String.join(" | ", row)).append(" |\n");
		}
		return out.toString();
	}

}
