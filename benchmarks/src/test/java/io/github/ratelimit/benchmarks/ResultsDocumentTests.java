package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link ResultsDocument} and {@link Targets}: the committed template renders from the committed results,
 * figures survive a save and load, and a target's verdict follows the figures.
 */
class ResultsDocumentTests {

	@Test
	void theCommittedTemplateRendersFromTheCommittedResults() throws IOException {
		Path results = Path.of("results");
		String template = Files.readString(Path.of("RESULTS.template.md"));
		String document = ResultsDocument.render(template, results, Figures.load(results));
		assertThat(document).doesNotContain("{{").contains("## Targets of issue #9").contains("| target | measured | met? |");
		assertThat(document).contains("## 9. Hot identity").contains("## 10. Cluster sizing").contains("(profiler)");
	}

	@Test
	void anIncludedFilesRelativeLinksAreMadeRelativeToTheDocument() {
		assertThat(ResultsDocument.relinked("[graph](profile-a.html) [web](https://x.y) [here](#top) ![c](c.png)",
				Path.of("results"))).isEqualTo("[graph](results/profile-a.html) [web](https://x.y) [here](#top)"
						+ " ![c](results/c.png)");
	}

	@Test
	void anUnknownDirectiveIsRefused(@TempDir Path results) {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> ResultsDocument.render("a {{nothing}} b", results, Figures.load(results)))
			.withMessageContaining("{{nothing}}");
	}

	@Test
	void aFigureIsFormattedAndAMissingOneSaysSo(@TempDir Path results) throws IOException {
		Figures figures = Figures.load(results).put("engine.x", 1.234).put("http.y", 540.0);
		figures.save();
		Figures loaded = Figures.load(results);
		assertThat(ResultsDocument.render("{{figure engine.x pct}} {{figure engine.x x}} {{figure http.y ms}}"
				+ " {{figure missing pct}}", results, loaded)).isEqualTo("123% 1.23x 0.54 ms n/a");
		loaded.clear("engine");
		assertThat(loaded.has("engine.x")).isFalse();
		assertThat(loaded.has("http.y")).isTrue();
	}

	@Test
	void aTargetIsMetOnlyWhenEveryModeMeetsIt(@TempDir Path results) {
		Figures figures = Figures.load(results);
		for (String scenario : new String[] { "allowed", "half-denied" }) {
			for (EngineBenchmark.Mode mode : EngineBenchmark.MODES) {
				String at = "engine." + scenario + "." + Figures.part(mode.name()) + ".";
				figures.put(at + "token-bucket.ceiling", 1.1).put(at + "token-bucket.bucket4j", 1.5);
				figures.put(at + "gcra.ceiling", 0.95).put(at + "gcra.bucket4j", 1.5);
			}
		}
		figures.put("engine.half-denied.blocking-x32.gcra.ceiling", 0.85);
		String table = Targets.table(figures);
		assertThat(line(table, "token-bucket >= 90%")).endsWith("| **yes** |");
		assertThat(line(table, "gcra >= 90%")).contains("**85%**").endsWith("| **no** (1 miss) |");
		assertThat(line(table, "gcra ahead of bucket4j")).endsWith("| **yes** |");
		assertThat(line(table, "hot identity")).contains("**not measured**");
		assertThat(table).contains("Why the targets not met are not met");
	}

	private static String line(String table, String start) {
		return table.lines()
			.filter((line) -> line.startsWith("| " + start))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no row " + start + " in\n" + table));
	}

}
