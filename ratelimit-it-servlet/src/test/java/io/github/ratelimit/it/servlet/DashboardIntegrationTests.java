package io.github.ratelimit.it.servlet;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboard ({@code docs/operations/grafana-dashboard.json}) and the example Prometheus alert rules
 * ({@code docs/operations/prometheus-alerts.yml}) against what the application really exports: both parse, every
 * panel has a query (but those of a type that has none, {@link #QUERYLESS}), and every PromQL expression names only {@code ratelimit_*} series (and the circuit breaker's
 * {@code resilience4j_circuitbreaker_*}), and only labels on them,
 * that {@code /actuator/prometheus} shows after a few allowed and denied requests. Two scrapes: the shared
 * application's (histograms off, the default) and that of an instance started with
 * {@code management.metrics.distribution.percentiles-histogram.ratelimit.decision=true} (so {@code _bucket}
 * series exist). Renaming a meter, a tag or a suffix fails this test until the dashboard and the alerts follow.
 */
class DashboardIntegrationTests extends IntegrationTestSupport {

	private static final Path DASHBOARD = Path.of("..", "docs", "operations", "grafana-dashboard.json");

	private static final Path ALERTS = Path.of("..", "docs", "operations", "prometheus-alerts.yml");

	private static final String HISTOGRAMS =
			"management.metrics.distribution.percentiles-histogram.ratelimit.decision=true";

	/**
	 * Panel types that query nothing: checked for their content instead, and left out of the query checks. Any other
	 * type must have queries.
	 */
	static final Set<String> QUERYLESS = Set.of("text");

	/** Labels Prometheus attaches to every series it scrapes: never in the application's own exposition. */
	private static final Set<String> TARGET_LABELS = Set.of("instance", "job");

	private static final Pattern SERIES = Pattern.compile("\\b(?:ratelimit|resilience4j_circuitbreaker)_[a-z_]+\\b");

	private static final Pattern SELECTOR = Pattern
		.compile("\\b((?:ratelimit|resilience4j_circuitbreaker)_[a-z_]+)\\s*\\{([^}]*)}");

	private static final Pattern MATCHER = Pattern.compile("(?:^|,)\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)");

	private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without|on|ignoring)\\s*\\(([^)]*)\\)");

	private static final Pattern LABEL_VALUES = Pattern
		.compile("label_values\\((?:[^,()]*,)?\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*\\)");

	private static final Pattern LEGEND_LABEL = Pattern.compile("\\{\\{\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*}}");

	private static final Pattern TEMPLATE_LABEL = Pattern.compile("\\$labels\\.([a-zA-Z_][a-zA-Z0-9_]*)");

	private static final Pattern EXPOSED = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+\\S+.*$");

	private static final Pattern EXPOSED_LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"(?:[^\"\\\\]|\\\\.)*\"");

	private static ConfigurableApplicationContext withHistograms;

	/** Series name to its label names, as the shared application (histograms off) exports them. */
	private Map<String, Set<String>> defaults;

	/** Series name to its label names, as the instance with the decision histogram exports them. */
	private Map<String, Set<String>> histograms;

	@BeforeAll
	static void startInstanceWithHistograms() {
		withHistograms = Instances.start(redis, HISTOGRAMS);
	}

	@AfterAll
	static void stopInstanceWithHistograms() {
		Instances.stop(withHistograms);
	}

	@BeforeEach
	void scrape() {
		this.defaults = exported(decideAndScrape(this.http, "shared-app"));
		this.histograms = exported(decideAndScrape(Instances.http(withHistograms), "with-histograms"));
		assertThat(this.defaults).doesNotContainKey("ratelimit_decision_seconds_bucket");
		assertThat(this.histograms).containsKey("ratelimit_decision_seconds_bucket");
	}

	@Test
	void theDashboardParsesAndEveryPanelQueriesPrometheusThroughTheDatasourceVariable() throws IOException {
		JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DASHBOARD));
		assertThat(dashboard.path("title").asString()).isNotBlank();
		assertThat(dashboard.path("schemaVersion").asInt()).isGreaterThanOrEqualTo(36);
		Map<String, JsonNode> variables = new HashMap<>();
		JsonNode list = dashboard.path("templating").path("list");
		for (int i = 0; i < list.size(); i++) {
			variables.put(list.get(i).path("name").asString(), list.get(i));
		}
		assertThat(variables).containsKeys("datasource", "policy");
		assertThat(variables.get("datasource").path("type").asString()).isEqualTo("datasource");
		assertThat(variables.get("datasource").path("query").asString()).isEqualTo("prometheus");
		assertThat(query(variables.get("policy"))).startsWith("label_values(ratelimit_decisions_total")
			.endsWith("policy)");
		List<JsonNode> panels = queryPanels(dashboard);
		assertThat(panels).hasSizeGreaterThanOrEqualTo(8);
		for (JsonNode panel : panels) {
			String title = panel.path("title").asString();
			assertThat(panel.path("datasource").path("uid").asString()).as(title).isEqualTo("${datasource}");
			JsonNode targets = panel.path("targets");
			assertThat(targets.size()).as("targets of %s", title).isPositive();
			for (int i = 0; i < targets.size(); i++) {
				assertThat(targets.get(i).path("expr").asString()).as("a query of %s", title).isNotBlank();
				assertThat(targets.get(i).path("datasource").path("uid").asString()).as(title)
					.isEqualTo("${datasource}");
			}
		}
	}

	@Test
	void everyDashboardQueryNamesExportedSeriesAndLabels() throws IOException {
		JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DASHBOARD));
		JsonNode list = dashboard.path("templating").path("list");
		for (int i = 0; i < list.size(); i++) {
			if ("query".equals(list.get(i).path("type").asString())) {
				String variable = "variable " + list.get(i).path("name").asString();
				assertNamesExportedSeriesAndLabels(variable, query(list.get(i)), Set.of());
				assertThat(series(query(list.get(i)))).as(variable).isNotEmpty();
			}
		}
		for (JsonNode panel : queryPanels(dashboard)) {
			JsonNode targets = panel.path("targets");
			for (int i = 0; i < targets.size(); i++) {
				String where = panel.path("title").asString() + " " + targets.get(i).path("refId").asString();
				String expr = targets.get(i).path("expr").asString();
				assertNamesExportedSeriesAndLabels(where, expr,
						labels(LEGEND_LABEL, targets.get(i).path("legendFormat").asString()));
				// every panel shows something with the histogram on; without it, all but the percentiles
				assertThat(series(expr)).as(where).containsAnyElementsOf(this.histograms.keySet());
				if (!expr.contains("_bucket")) {
					assertThat(series(expr)).as("%s without histograms", where)
						.containsAnyElementsOf(this.defaults.keySet());
				}
			}
		}
	}

	@Test
	void theTopIdentitiesPanelPointsToTheEndpointWithThePolicyVariable() throws IOException {
		JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DASHBOARD));
		JsonNode top = panels(dashboard).stream()
			.filter((panel) -> "Top limited identities".equals(panel.path("title").asString()))
			.findFirst()
			.orElseThrow();
		assertThat(top.path("type").asString()).isEqualTo("text");
		assertThat(top.path("options").path("mode").asString()).isEqualTo("markdown");
		assertThat(top.path("options").path("content").asString()).contains("`GET /actuator/ratelimits/top`",
				"`GET /actuator/ratelimits/{policy}/top`", "${policy:text}", "ratelimit.top.");
	}

	@Test
	@SuppressWarnings("unchecked")
	void theAlertRulesParseAndNameExportedSeriesAndLabels() throws IOException {
		Map<String, Object> file = new Yaml().load(Files.readString(ALERTS));
		List<Map<String, Object>> groups = (List<Map<String, Object>>) file.get("groups");
		assertThat(groups).isNotEmpty();
		Set<String> alerts = new TreeSet<>();
		for (Map<String, Object> group : groups) {
			assertThat(group.get("name")).isNotNull();
			for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
				String alert = (String) rule.get("alert");
				assertThat(alert).isNotBlank();
				alerts.add(alert);
				assertThat(rule.get("for")).as(alert).asString().matches("\\d+[smh]");
				assertThat((Map<String, Object>) rule.get("labels")).as(alert).containsKey("severity");
				Map<String, Object> annotations = (Map<String, Object>) rule.get("annotations");
				assertThat(annotations).as(alert).containsKeys("summary", "description");
				String expr = (String) rule.get("expr");
				Set<String> templated = labels(TEMPLATE_LABEL,
						annotations.get("summary") + " " + annotations.get("description"));
				assertNamesExportedSeriesAndLabels(alert, expr, templated);
				// an alert's label is one its expression keeps
				assertThat(labels(GROUPING, expr)).as("labels %s keeps", alert).containsAll(templated);
				// alerts work with the defaults: no histogram needed
				assertThat(this.defaults.keySet()).as(alert).containsAll(series(expr));
			}
		}
		assertThat(alerts).contains("RateLimitDenyRatioSpike", "RateLimitBackendErrors",
				"RateLimitFailureModeDecisions", "RateLimitCircuitOpen");
	}

	/**
	 * Asserts that an expression names at least one rate-limit series, each exported by one of the two
	 * applications, and that each label it matches or groups by, and each of the extra labels, is on the series it
	 * names (or is one Prometheus attaches itself).
	 */
	private void assertNamesExportedSeriesAndLabels(String where, String expr, Set<String> moreLabels) {
		Map<String, Set<String>> exported = new HashMap<>(this.defaults);
		this.histograms.forEach((name, labels) -> exported.merge(name, labels, (a, b) -> {
			Set<String> both = new TreeSet<>(a);
			both.addAll(b);
			return both;
		}));
		Set<String> named = series(expr);
		assertThat(exported.keySet()).as("series named in %s: %s", where, expr).containsAll(named);
		Matcher selector = SELECTOR.matcher(expr);
		while (selector.find()) {
			assertLabelsOn(where, exported.get(selector.group(1)), labels(MATCHER, selector.group(2)));
		}
		Set<String> grouped = new LinkedHashSet<>(labels(GROUPING, expr));
		grouped.addAll(labels(LABEL_VALUES, expr));
		grouped.addAll(moreLabels);
		for (String name : named) {
			assertLabelsOn(where + " (" + name + ")", exported.get(name), grouped);
		}
	}

	private static void assertLabelsOn(String where, Set<String> exported, Set<String> used) {
		for (String label : used) {
			if (!TARGET_LABELS.contains(label)) {
				assertThat(exported).as("label %s in %s", label, where).contains(label);
			}
		}
	}

	/** Two requests allowed and one denied by policy {@code per-order} (2 an hour per order), then the scrape. */
	private static String decideAndScrape(Http http, String order) {
		assertThat(http.status("/orders/" + order)).isEqualTo(200);
		assertThat(http.status("/orders/" + order)).isEqualTo(200);
		assertThat(http.status("/orders/" + order)).isEqualTo(429);
		HttpResponse<String> scrape = http.get("/actuator/prometheus");
		assertThat(scrape.statusCode()).isEqualTo(200);
		assertThat(scrape.body()).contains(
				"ratelimit_decisions_total{outcome=\"allowed\",policy=\"per-order\",tier=\"none\"}",
				"ratelimit_decisions_total{outcome=\"denied\",policy=\"per-order\",tier=\"none\"}");
		return scrape.body();
	}

	/** The rate-limit series of a scrape, each with the names of its labels. */
	private static Map<String, Set<String>> exported(String scrape) {
		Map<String, Set<String>> series = new HashMap<>();
		for (String line : scrape.split("\n")) {
			Matcher exposed = EXPOSED.matcher(line);
			if (!line.startsWith("#") && exposed.matches() && (exposed.group(1).startsWith("ratelimit_")
					|| exposed.group(1).startsWith("resilience4j_circuitbreaker_"))) {
				Set<String> labels = series.computeIfAbsent(exposed.group(1), (name) -> new TreeSet<>());
				if (exposed.group(2) != null) {
					labels.addAll(labels(EXPOSED_LABEL, exposed.group(2)));
				}
			}
		}
		return series;
	}

	private static Set<String> series(String expr) {
		Set<String> names = new TreeSet<>();
		Matcher matcher = SERIES.matcher(expr);
		while (matcher.find()) {
			names.add(matcher.group());
		}
		return names;
	}

	/** The labels a pattern finds (its first group, split at commas). */
	private static Set<String> labels(Pattern pattern, String text) {
		Set<String> labels = new TreeSet<>();
		Matcher matcher = pattern.matcher(text);
		while (matcher.find()) {
			for (String label : matcher.group(1).split(",")) {
				if (!label.isBlank()) {
					labels.add(label.strip());
				}
			}
		}
		return labels;
	}

	/** A query variable's query: a string, or (newer Grafana) an object holding it. */
	private static String query(JsonNode variable) {
		JsonNode query = variable.path("query");
		return query.isObject() ? query.path("query").asString() : query.asString();
	}

	/**
	 * The panels that query Prometheus: every panel but those of a {@link #QUERYLESS} type, which must have no
	 * queries and some content.
	 */
	private static List<JsonNode> queryPanels(JsonNode dashboard) {
		List<JsonNode> panels = new ArrayList<>();
		for (JsonNode panel : panels(dashboard)) {
			String title = panel.path("title").asString();
			if (QUERYLESS.contains(panel.path("type").asString())) {
				assertThat(panel.path("targets").size()).as("queries of %s", title).isZero();
				assertThat(panel.path("options").path("content").asString()).as("content of %s", title).isNotBlank();
			}
			else {
				panels.add(panel);
			}
		}
		return panels;
	}

	/** The panels, those inside collapsed rows included; rows themselves are no panels. */
	private static List<JsonNode> panels(JsonNode dashboard) {
		List<JsonNode> panels = new ArrayList<>();
		JsonNode top = dashboard.path("panels");
		for (int i = 0; i < top.size(); i++) {
			JsonNode panel = top.get(i);
			if ("row".equals(panel.path("type").asString())) {
				JsonNode inside = panel.path("panels");
				for (int j = 0; j < inside.size(); j++) {
					panels.add(inside.get(j));
				}
			}
			else {
				panels.add(panel);
			}
		}
		return panels;
	}

}
