package io.github.ratelimit.autoconfigure.reactive;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.redis.RedisRateLimitBackend;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimited;
import io.github.ratelimit.spring.RateLimitedMethodPostProcessor;
import io.github.ratelimit.spring.reactive.RateLimitWebExceptionHandler;
import io.github.ratelimit.spring.reactive.RateLimitWebFilter;
import io.github.ratelimit.spring.reactive.ReactiveRateLimitedMethodPostProcessor;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.aopalliance.intercept.MethodInvocation;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.config.EnableWebFlux;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitReactiveAutoConfigurationTests {

	private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(RateLimitAutoConfiguration.class,
			RateLimitReactiveAutoConfiguration.class);

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(CONFIGURATIONS);

	@Test
	void registersTheFilterTheExceptionHandlerAndTheMethodPostProcessorInReactiveApplications() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitWebFilter.class)
				.hasSingleBean(RateLimitWebExceptionHandler.class)
				.hasSingleBean(ReactiveRateLimitedMethodPostProcessor.class);
			assertThat(context.getBean(RateLimitWebFilter.class).getOrder()).isEqualTo(-90);
			assertThat(context.getBean(RateLimitWebExceptionHandler.class).getOrder()).isEqualTo(-2);
		});
	}

	@Test
	void theFilterOrderIsConfigurable() {
		this.runner.withPropertyValues("ratelimit.filter.order=-110")
			.run((context) -> assertThat(context.getBean(RateLimitWebFilter.class).getOrder()).isEqualTo(-110));
	}

	@Test
	void registersNothingInServletOrNonWebApplications() {
		new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitWebFilter.class)
				.doesNotHaveBean(RateLimitWebExceptionHandler.class)
				.doesNotHaveBean(ReactiveRateLimitedMethodPostProcessor.class));
		new ApplicationContextRunner().withConfiguration(CONFIGURATIONS)
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitWebFilter.class)
				.doesNotHaveBean(RateLimitWebExceptionHandler.class)
				.doesNotHaveBean(ReactiveRateLimitedMethodPostProcessor.class));
	}

	@Test
	void isOffWhenRateLimitingIsDisabled() {
		this.runner.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitEnforcer.class)
				.doesNotHaveBean(RateLimitWebFilter.class)
				.doesNotHaveBean(RateLimitWebExceptionHandler.class)
				.doesNotHaveBean(ReactiveRateLimitedMethodPostProcessor.class));
	}

	@Test
	void theFilterIsOffWhenTheFilterIsDisabledButAnnotationsStillWork() {
		this.runner.withPropertyValues("ratelimit.filter.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitWebFilter.class)
				.hasSingleBean(RateLimitWebExceptionHandler.class)
				.hasSingleBean(ReactiveRateLimitedMethodPostProcessor.class));
	}

	@Test
	void backsOffWhenTheUserDefinesTheBeans() {
		this.runner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitWebFilter.class)
				.hasSingleBean(RateLimitWebExceptionHandler.class)
				.hasSingleBean(RateLimitedMethodPostProcessor.class)
				.doesNotHaveBean(ReactiveRateLimitedMethodPostProcessor.class);
			assertThat(context.getBean(RateLimitWebFilter.class).getOrder()).isEqualTo(7);
			assertThat(context.getBean(RateLimitWebExceptionHandler.class).getOrder()).isEqualTo(8);
		});
	}

	@Test
	void backsOffForAUsersReactivePostProcessor() {
		this.runner.withUserConfiguration(UserReactivePostProcessor.class)
			.run((context) -> assertThat(context).getBean(ReactiveRateLimitedMethodPostProcessor.class)
				.isSameAs(UserReactivePostProcessor.instance));
	}

	@Test
	void limitsRulesAndAnnotatedHandlersEndToEnd() {
		this.runner.withUserConfiguration(WebApp.class)
			.withPropertyValues("ratelimit.policies.per-ip.algorithm=token-bucket", "ratelimit.policies.per-ip.limit=3",
					"ratelimit.policies.per-ip.window=1h", "ratelimit.filter.rules[0].paths=/api/**",
					"ratelimit.filter.rules[0].policies=per-ip")
			.run((context) -> {
				assertThat(AopUtils.isAopProxy(context.getBean(Api.class))).isTrue();
				WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
				client.get()
					.uri("/api/hello/a")
					.exchange()
					.expectStatus()
					.isOk()
					.expectHeader()
					.valueEquals("RateLimit-Policy", "\"per-ip\";q=3;w=3600, \"per-name\";q=1;w=3600");
				client.get()
					.uri("/api/hello/a")
					.exchange()
					.expectStatus()
					.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
					.expectHeader()
					.contentType("application/problem+json");
				client.get().uri("/api/hello/b").exchange().expectStatus().isOk();
				client.get().uri("/api/hello/c").exchange().expectStatus().isOk();
				client.get()
					.uri("/api/hello/d")
					.exchange()
					.expectStatus()
					.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
					.expectHeader()
					.valueMatches("RateLimit", "\"per-ip\";r=0;t=\\d+");
			});
	}

	@Test
	void rateLimitedMethodsThatCannotBeCheckedWithoutBlockingFailTheStartup() {
		this.runner.withUserConfiguration(BlockingApp.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("BlockingApi.hello() which returns java.lang.String")
				.hasMessageContaining("must return Mono, Flux or Publisher"));
	}

	@Test
	void opensTheSharedReactiveRedisConnectionAtStartupNotOnTheFirstRequest() {
		RedisServer redis = RedisServers.standalone();
		long before = clients(redis);
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
					RateLimitReactiveAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port())
			.run((context) -> {
				assertThat(context).hasBean("rateLimitRedisWarmUp");
				assertThat(context.getBean(RateLimitBackend.class)).isInstanceOf(RedisRateLimitBackend.class);
				assertThat(clients(redis)).as("connections to Redis once started").isGreaterThan(before);
			});
		this.runner.run((context) -> assertThat(context).doesNotHaveBean("rateLimitRedisWarmUp"));
	}

	@Test
	void aRedisThatCannotBeReachedAtStartupOnlyLogsAWarning() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
					RateLimitReactiveAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + unusedPort(),
					"spring.data.redis.connect-timeout=1s")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(RateLimitWebFilter.class));
	}

	private static long clients(RedisServer redis) {
		return redis.commands().clientList().lines().count();
	}

	private static int unusedPort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		@Bean
		RateLimitWebFilter myFilter(RateLimitEnforcer enforcer, RateLimitResponses responses) {
			return new RateLimitWebFilter(enforcer, responses, 7);
		}

		@Bean
		RateLimitWebExceptionHandler myHandler(RateLimitResponses responses) {
			return new RateLimitWebExceptionHandler(responses, 8);
		}

		@Bean
		static RateLimitedMethodPostProcessor myPostProcessor(RateLimitEnforcer enforcer) {
			return new RateLimitedMethodPostProcessor(() -> enforcer, MethodInvocation::proceed) {
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserReactivePostProcessor {

		static final ReactiveRateLimitedMethodPostProcessor instance = new ReactiveRateLimitedMethodPostProcessor(
				() -> {
					throw new IllegalStateException("not needed");
				}, () -> {
					throw new IllegalStateException("not needed");
				});

		@Bean
		static ReactiveRateLimitedMethodPostProcessor myReactivePostProcessor() {
			return instance;
		}

	}

	@RestController
	static class Api {

		@GetMapping("/api/hello/{name}")
		@RateLimited(name = "per-name", algorithm = Algorithm.GCRA, limit = 1, window = "1h", key = "#name")
		public Mono<String> hello(@PathVariable String name) {
			return Mono.just("hello " + name);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebFlux
	static class WebApp {

		@Bean
		Api api() {
			return new Api();
		}

	}

	@RestController
	static class BlockingApi {

		@GetMapping("/blocking")
		@RateLimited(name = "blocking", algorithm = Algorithm.GCRA, limit = 1, window = "1s")
		public String hello() {
			return "hello";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BlockingApp {

		@Bean
		BlockingApi blockingApi() {
			return new BlockingApi();
		}

	}

}
