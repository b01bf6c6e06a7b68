package io.github.ratelimit.it.servlet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Grafana dashboard and the example alert rules evaluated by a real Prometheus that scrapes a real application
 * (on a Redis of its own) every second, in three scenarios, each with a fresh Prometheus: normal traffic, a deny
 * spike, Redis down. Every panel query (read from the dashboard, its variables substituted: "All" for the
 * dashboard's own, {@link #BUILT_INS} for Grafana's) must return series; each alert must become active in the
 * scenario it is written for, and no other alert at any time of that scenario. Skipped, with the reason, where no
 * Prometheus binary is given ({@code RATELIMIT_PROMETHEUS}, set by {@code .ci/run}).
 * <p>
 * The rules are the file's expressions, unchanged, with every {@code for:} set to 0s so that an alert is active as
 * soon as its expression holds. A scenario lasts seconds, not the [5m] and [1h] of the rules: what this proves is
 * that each expression selects the series the application exports and holds (or not) on what a scenario produces;
 * the deny-spike rule's comparison with an hour-old baseline finds no such hour here (so its absolute threshold
 * decides), and the durations are left to {@code promtool test rules} ({@link PrometheusAlertRulesTests}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PrometheusDashboardIntegrationTests {

	private static final Path DASHBOARD = Path.of("..", "docs", "operations", "grafana-dashboard.json");

	private static final Path ALERTS = Path.of("..", "docs", "operations", "prometheus-alerts.yml");

	/**
	 * The panels with no series while Redis decides every request, so not under normal traffic: their scenario is
	 * Redis down. Every other panel must show series under normal traffic.
	 */
	private static final Set<String> ONLY_WHILE_REDIS_FAILS = Set.of("Failure-mode decisions");

	private static final Set<String> DENY_SPIKE_ALERTS = Set.of("RateLimitDenyRatioSpike");

	private static final Set<String> REDIS_DOWN_ALERTS = Set.of("RateLimitFailureModeDecisions",
			"RateLimitCircuitOpen", "RateLimitBackendErrors");

	/** Grafana's built-in variables: a rate window of a few scrapes, as Grafana's $__rate_interval would be. */
	private static final Map<String, String> BUILT_INS = Map.of("__rate_interval", "30s", "__interval", "5s",
			"__range", "5m");

	private static final Pattern VARIABLE = Pattern.compile("\\$\\{(\\w+)}|\\$(\\w+)");

	private static final Pattern FOR = Pattern.compile("(?m)^(\\s+)for: \\S+$");

	private static final Duration WAIT = Duration.ofSeconds(90);

	/** Numbers the normal traffic's requests over all scenarios, so that each client is new. */
	private static final AtomicLong requests = new AtomicLong();

	@TempDir
	static Path dir;

	private static Path binary;

	private static Path rules;

	private static RedisServer redis;

	private static ConfigurableApplicationContext application;

	private static Http http;

	@BeforeAll
	static void startApplication() throws IOException {
		binary = PrometheusServer.binary();
		if (binary == null) {
			return;
		}
		rules = rulesActiveAtOnce(dir.resolve("alerts.yml"));
		redis = RedisServer.start();
		// the decision histogram for the percentile panel; a budget a loaded machine keeps, so that normal
		// traffic sees no failure-mode decision
		application = Instances.start(redis,
				"management.metrics.distribution.percentiles-histogram.ratelimit.decision=true",
				"ratelimit.redis.timeout=2s");
		http = Instances.http(application);
	}

	/** In each test, so that the report lists every test as skipped, with the reason. */
	@BeforeEach
	void prometheusGiven() {
		assumeTrue(binary != null, PrometheusServer.NOT_GIVEN);
	}

	@AfterAll
	static void stopApplication() {
		Instances.stop(application);
		if (redis != null) {
			redis.stop();
		}
	}

	@Test
	@Order(1)
	void underNormalTrafficEveryPanelShowsSeriesAndNoAlertFires() throws IOException {
		List<Query> queries = dashboardQueries();
		try (PrometheusServer prometheus = start("normal"); PacedLoad load = normalTraffic()) {
			for (Query query : queries) {
				if (!ONLY_WHILE_REDIS_FAILS.contains(query.panel())) {
					awaitSeries(prometheus, query);
				}
			}
			awaitRulesEvaluatedAfter(prometheus, Instant.now().plusSeconds(3));
			assertThat(prometheus.alertsEverActive()).as("alerts under normal traffic").isEmpty();
			for (Query query : queries) {
				if (ONLY_WHILE_REDIS_FAILS.contains(query.panel())) {
					assertThat(prometheus.query(query.expr())).as("%s: Redis decided every request", query).isEmpty();
				}
			}
		}
	}

	@Test
	@Order(2)
	void aDenySpikeFiresTheDenyRatioAlertForThatPolicyAndNoOtherAlert() throws IOException {
		// /api/** is limited to 5 a minute per client address: nearly every request is refused
		try (PrometheusServer prometheus = start("deny-spike");
				PacedLoad load = normalTraffic();
				PacedLoad spike = new PacedLoad("spike", 1, () -> expectStatus("/api/hello", "", 200, 429))) {
			awaitAlerts(prometheus, DENY_SPIKE_ALERTS);
			Set<String> policies = new TreeSet<>();
			prometheus.query("max_over_time(ALERTS{alertname=\"RateLimitDenyRatioSpike\"}[1h])")
				.forEach((series) -> policies.add(series.path("metric").path("policy").asString()));
			assertThat(policies).containsExactly("per-client");
		}
	}

	@Test
	@Order(3)
	void redisDownFiresTheFailureModeCircuitAndBackendAlertsAndNoOther() throws IOException {
		List<Query> queries = dashboardQueries();
		try (PrometheusServer prometheus = start("redis-down"); PacedLoad load = normalTraffic()) {
			awaitSeries(prometheus, queries.get(0));
			redis.kill();
			try {
				awaitAlerts(prometheus, REDIS_DOWN_ALERTS);
				for (Query query : queries) {
					if (ONLY_WHILE_REDIS_FAILS.contains(query.panel())) {
						awaitSeries(prometheus, query);
					}
				}
			}
			finally {
				redis.restart();
			}
		}
	}

	/** Waits until all the expected alerts have been active, then a few more evaluations: no other ever was. */
	private static void awaitAlerts(PrometheusServer prometheus, Set<String> expected) {
		Wait.until("alerts " + expected, WAIT, () -> prometheus.alertsEverActive().containsAll(expected));
		awaitRulesEvaluatedAfter(prometheus, Instant.now().plusSeconds(3));
		assertThat(prometheus.alertsEverActive()).as("alerts active in the scenario")
			.containsExactlyInAnyOrderElementsOf(expected);
	}

	private static void awaitSeries(PrometheusServer prometheus, Query query) {
		Wait.until(query.toString(), WAIT, () -> !prometheus.query(query.expr()).isEmpty());
	}

	private static void awaitRulesEvaluatedAfter(PrometheusServer prometheus, Instant instant) {
		Wait.until("rules evaluated after " + instant, WAIT, () -> {
			Instant evaluated = prometheus.lastRuleEvaluation();
			return evaluated != null && evaluated.isAfter(instant);
		});
	}

	private static PrometheusServer start(String scenario) throws IOException {
		return PrometheusServer.start(binary, dir.resolve(scenario), Instances.port(application), rules);
	}

	/**
	 * Requests that Redis decides and that deny little, whatever the machine's pace: on /outage/open (5 an hour per
	 * client) blocks of 61 requests, eleven clients sending 5 and the twelfth 6, so that its sixth is refused and
	 * between two refusals 60 requests are admitted. A rate Prometheus computes from two of its scrapes counts no
	 * refusal before a first one it scraped, so it sees at most one refusal per 60 admitted ones (well below the
	 * deny-spike alert's quarter) however few requests fall between its first scrapes; a client refused every sixth
	 * request could show 2 of 7 there. On /shadow/rule (a shadow policy of 2 an hour per client) three from each
	 * client, the third a would-be denial.
	 */
	private static PacedLoad normalTraffic() {
		return new PacedLoad("normal", 2, () -> {
			long n = requests.getAndIncrement();
			if (n % 2 == 0) {
				long block = (n / 2) / 61;
				long client = Math.min(((n / 2) % 61) / 5, 11);
				expectStatus("/outage/open", "c-" + block + "-" + client, 200, 429);
			}
			else {
				expectStatus("/shadow/rule", "s-" + n / 6, 200);
			}
		});
	}

	private static void expectStatus(String path, String client, Integer... expected) {
		int status = client.isEmpty() ? http.status(path) : http.status(path, "X-Client", client);
		if (!Set.of(expected).contains(status)) {
			throw new IllegalStateException(path + " answered " + status);
		}
	}

	/** A copy of the alert rules with every {@code for:} set to 0s; the expressions stay the file's. */
	private static Path rulesActiveAtOnce(Path copy) throws IOException {
		String original = Files.readString(ALERTS);
		String atOnce = FOR.matcher(original).replaceAll("$1for: 0s");
		assertThat(expressions(atOnce)).isNotEmpty().isEqualTo(expressions(original));
		Files.writeString(copy, atOnce);
		return copy;
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> expressions(String rulesFile) {
		Map<String, Object> expressions = new LinkedHashMap<>();
		Map<String, Object> file = new Yaml().load(rulesFile);
		for (Map<String, Object> group : (List<Map<String, Object>>) file.get("groups")) {
			for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
				expressions.put((String) rule.get("alert"), rule.get("expr"));
			}
		}
		return expressions;
	}

	/** Every query of every panel (rows opened), its variables substituted. */
	private static List<Query> dashboardQueries() throws IOException {
		JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DASHBOARD));
		Map<String, String> values = new HashMap<>(BUILT_INS);
		for (JsonNode variable : dashboard.path("templating").path("list")) {
			if ("query".equals(variable.path("type").asString())) {
				assertThat(variable.path("allValue").asString()).as("the All value of %s", variable.path("name"))
					.isNotBlank();
				values.put(variable.path("name").asString(), variable.path("allValue").asString());
			}
		}
		List<Query> queries = new ArrayList<>();
		for (JsonNode panel : dashboard.path("panels")) {
			addQueries(panel, values, queries);
			for (JsonNode inRow : panel.path("panels")) {
				addQueries(inRow, values, queries);
			}
		}
		assertThat(queries).hasSizeGreaterThanOrEqualTo(10);
		return queries;
	}

	/**
	 * Adds a panel's queries; a row's are its panels', and a panel of a type that queries nothing
	 * ({@link DashboardIntegrationTests#QUERYLESS}) must have none. Any other panel must have queries.
	 */
	private static void addQueries(JsonNode panel, Map<String, String> values, List<Query> queries) {
		String title = panel.path("title").asString();
		String type = panel.path("type").asString();
		if ("row".equals(type) || DashboardIntegrationTests.QUERYLESS.contains(type)) {
			assertThat(panel.path("targets").size()).as("queries of %s", title).isZero();
			return;
		}
		assertThat(panel.path("targets").size()).as("queries of %s", title).isPositive();
		for (JsonNode target : panel.path("targets")) {
			Matcher variable = VARIABLE.matcher(target.path("expr").asString());
			StringBuilder expr = new StringBuilder();
			while (variable.find()) {
				String name = (variable.group(1) != null) ? variable.group(1) : variable.group(2);
				assertThat(values).as("variables known in %s", title).containsKey(name);
				variable.appendReplacement(expr, Matcher.quoteReplacement(values.get(name)));
			}
			variable.appendTail(expr);
			queries.add(new Query(title, target.path("refId").asString(), expr.toString()));
		}
	}

	/** A panel's query, ready for Prometheus. */
	private record Query(String panel, String refId, String expr) {

		@Override
		public String toString() {
			return "series of panel \"" + this.panel + "\" " + this.refId + ": " + this.expr;
		}

	}

}
