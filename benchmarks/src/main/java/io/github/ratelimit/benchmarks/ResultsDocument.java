package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes {@code benchmarks/RESULTS.md} from its template ({@code benchmarks/RESULTS.template.md}), the
 * sections' latest tables ({@code results/*.md}) and their figures ({@link Figures}), so that every number in it is
 * the latest run's. The template is the prose; it places the generated parts with directives on lines of their own
 * or inline:
 * <ul>
 * <li>{@code {{environment}}}: the machine of the latest whole run;</li>
 * <li>{@code {{runs}}}: when and on which redis-server each section last ran;</li>
 * <li>{@code {{targets}}}: the targets table ({@link Targets});</li>
 * <li>{@code {{include NAME}}}: the file {@code results/NAME} as its section wrote it;</li>
 * <li>{@code {{figure KEY FORMAT}}}: one figure, FORMAT being {@code pct}, {@code x}, {@code int}, {@code ms},
 * {@code f1}, {@code f2} or {@code f3}; {@code n/a} when the figure was not measured.</li>
 * </ul>
 */
final class ResultsDocument {

	static final List<String> SECTIONS = List.of("engine", "script", "functions", "memory", "accuracy", "http", "http-wrk",
			"http-compare", "lease", "profile", "failure", "zset", "harness", "hot", "top", "cluster");

	private static final Pattern DIRECTIVE = Pattern.compile("\\{\\{(\\w[\\w-]*)(?: ([^}]*))?\\}\\}");

	/** A Markdown link or image target with no scheme, no anchor of its own page and no absolute path. */
	private static final Pattern RELATIVE_LINK = Pattern.compile("\\]\\((?![a-z]+:|#|/)([^) ]+)\\)");

	private ResultsDocument() {
	}

	/**
	 * Writes the document next to the results directory when the template is there.
	 * @param results the results directory ({@code benchmarks/results})
	 * @param figures the figures of the latest runs
	 * @return the file written, or null when there is no template
	 * @throws IOException when a file cannot be read or written
	 */
	static Path write(Path results, Figures figures) throws IOException {
		Path base = results.toAbsolutePath().getParent();
		Path template = base.resolve("RESULTS.template.md");
		if (!Files.exists(template)) {
			return null;
		}
		Path document = base.resolve("RESULTS.md");
		Files.writeString(document, render(Files.readString(template), results, figures));
		return document;
	}

	static String render(String template, Path results, Figures figures) throws IOException {
		StringBuilder out = new StringBuilder();
		Matcher matcher = DIRECTIVE.matcher(template);
		int last = 0;
		while (matcher.find()) {
			out.append(template, last, matcher.start());
			String argument = (matcher.group(2) != null) ? matcher.group(2).trim() : "";
			out.append(switch (matcher.group(1)) {
				case "environment" -> read(results.resolve("environment.md"));
				case "runs" -> runs(figures);
				case "targets" -> Targets.table(figures);
				case "include" -> relinked(read(results.resolve(argument)).strip(), results) + "\n";
				case "figure" -> figure(figures, argument);
				default -> throw new IllegalArgumentException("Unknown directive " + matcher.group());
			});
			last = matcher.end();
		}
		return out.append(template.substring(last)).toString();
	}

	/**
	 * A results file's relative links (to its flame graphs, say) made relative to the document, which is in the
	 * results directory's parent.
	 */
	static String relinked(String content, Path results) {
		String prefix = results.getFileName() + "/";
		return RELATIVE_LINK.matcher(content).replaceAll((link) -> Matcher.quoteReplacement("](" + prefix + link.group(1) + ")"));
	}

	private static String read(Path file) throws IOException {
		return Files.exists(file) ? Files.readString(file) : "*(not run yet: `" + file.getFileName() + "` is missing)*\n";
	}

	private static String runs(Figures figures) {
		Markdown table = new Markdown("section", "last run", "redis-server", "shortened (--quick)");
		for (String section : SECTIONS) {
			String at = "run." + section + ".";
			if (figures.text(at + "date") == null) {
				table.row(section, "not run since the results were first generated", "", "");
				continue;
			}
			table.row(section, figures.text(at + "date"), figures.text(at + "redis"),
					"true".equals(figures.text(at + "quick")) ? "**yes**" : "no");
		}
		return table.toString();
	}

	private static String figure(Figures figures, String argument) {
		String[] parts = argument.split(" ");
		double value = figures.number(parts[0]);
		if (Double.isNaN(value)) {
			return "n/a";
		}
		String format = (parts.length > 1) ? parts[1] : "f2";
		return switch (format) {
			case "pct" -> Figures.percent(value);
			case "x" -> Figures.times(value);
			case "int" -> String.format(Locale.ROOT, "%,.0f", value);
			case "ms" -> String.format(Locale.ROOT, "%.2f ms", value / 1000);
			case "f1" -> String.format(Locale.ROOT, "%.1f", value);
			case "f3" -> String.format(Locale.ROOT, "%.3f", value);
			default -> String.format(Locale.ROOT, "%.2f", value);
		};
	}

}
