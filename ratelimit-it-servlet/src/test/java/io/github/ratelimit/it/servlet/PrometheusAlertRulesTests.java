package io.github.ratelimit.it.servlet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The example alert rules through Prometheus's own {@code promtool}: {@code check rules} on the rules file, and
 * {@code test rules} on its unit tests ({@code docs/operations/prometheus-alerts.test.yml}: each alert on
 * synthetic series, with its real {@code for:} and windows, firing in its case and silent in the cases next to it).
 * Skipped, with the reason, where no Prometheus binary is given ({@code RATELIMIT_PROMETHEUS}, set by
 * {@code .ci/run}).
 */
class PrometheusAlertRulesTests {

	private static final Path ALERTS = Path.of("..", "docs", "operations", "prometheus-alerts.yml");

	private static final Path ALERT_TESTS = Path.of("..", "docs", "operations", "prometheus-alerts.test.yml");

	private Path promtool;

	@TempDir
	Path dir;

	/** In each test, so that the report lists every test as skipped, with the reason. */
	@BeforeEach
	void findPromtool() {
		Path binary = PrometheusServer.binary();
		assumeTrue(binary != null, PrometheusServer.NOT_GIVEN);
		this.promtool = PrometheusServer.promtool(binary);
	}

	@Test
	void promtoolChecksTheAlertRules() throws Exception {
		String output = promtool("check", "rules", ALERTS.toString());
		assertThat(output).contains("SUCCESS: " + alerts().size() + " rules found");
	}

	@Test
	void theUnitTestsOfEveryAlertPass() throws Exception {
		String output = promtool("test", "rules", ALERT_TESTS.toString());
		assertThat(output).contains("SUCCESS");
		assertThat(firing(true)).as("alerts tested firing").containsAll(alerts());
		assertThat(firing(false)).as("alerts tested silent").containsAll(alerts());
	}

	/**
	 * Runs promtool, its output into a file so that a promtool that hangs cannot hold the read (it is killed after
	 * a minute); fails with its output unless it exits 0.
	 */
	private String promtool(String... arguments) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(this.promtool.toString()));
		command.addAll(List.of(arguments));
		Path log = this.dir.resolve("promtool.log");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		boolean ended = process.waitFor(60, TimeUnit.SECONDS);
		if (!ended) {
			process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
		String output = Files.readString(log, StandardCharsets.UTF_8);
		assertThat(ended).as("promtool %s ended within a minute:%n%s", String.join(" ", arguments), output).isTrue();
		assertThat(process.exitValue()).as("promtool %s:%n%s", String.join(" ", arguments), output).isZero();
		return output;
	}

	@SuppressWarnings("unchecked")
	private static Set<String> alerts() throws IOException {
		Set<String> alerts = new TreeSet<>();
		Map<String, Object> file = new Yaml().load(Files.readString(ALERTS));
		for (Map<String, Object> group : (List<Map<String, Object>>) file.get("groups")) {
			for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
				alerts.add((String) rule.get("alert"));
			}
		}
		return alerts;
	}

	/** The alerts the unit tests expect to fire somewhere ({@code true}) or to be silent somewhere. */
	@SuppressWarnings("unchecked")
	private static Set<String> firing(boolean fires) throws IOException {
		Set<String> alerts = new TreeSet<>();
		Map<String, Object> file = new Yaml().load(Files.readString(ALERT_TESTS));
		for (Map<String, Object> test : (List<Map<String, Object>>) file.get("tests")) {
			for (Map<String, Object> check : (List<Map<String, Object>>) test.get("alert_rule_test")) {
				if (((List<Object>) check.get("exp_alerts")).isEmpty() != fires) {
					alerts.add((String) check.get("alertname"));
				}
			}
		}
		return alerts;
	}

}
