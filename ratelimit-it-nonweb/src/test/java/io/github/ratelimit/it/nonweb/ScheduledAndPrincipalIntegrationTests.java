package io.github.ratelimit.it.nonweb;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A {@code @Scheduled} job with {@code @RateLimited} in a plain application: the scheduler keeps calling it, the
 * work runs as often as the policy allows; and a {@code principal} key taken from Spring Security's context.
 */
class ScheduledAndPrincipalIntegrationTests {

	private static final RedisServer redis = RedisServers.standalone();

	private ConfigurableApplicationContext context;

	@AfterEach
	void stop() {
		SecurityContextHolder.clearContext();
		if (this.context != null) {
			this.context.close();
		}
	}

	@Test
	void aScheduledJobRunsAsOftenAsItsPolicyAllowsWhileTheSchedulerKeepsCallingIt() {
		redis.flushAll();
		this.context = start();
		NightlyJob job = this.context.getBean(NightlyJob.class);
		List<Throwable> denials = this.context.getBean(JobApplication.class).denials;
		await().atMost(Duration.ofSeconds(30)).until(() -> denials.size() >= 5);
		assertThat(job.runs()).isEqualTo(3);
		assertThat(denials).allSatisfy((error) -> assertThat(error).isInstanceOf(RateLimitExceededException.class));
	}

	@Test
	void thePrincipalKeyIsTheSecurityContextsUser() {
		redis.flushAll();
		this.context = start();
		NightlyJob job = this.context.getBean(NightlyJob.class);
		// without an authenticated user the key finds no identity: the calls share one (missing-key: shared)
		assertThat(job.report()).isEqualTo("report");
		authenticate("alice");
		assertThat(job.report()).isEqualTo("report");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(job::report)
			.satisfies((denial) -> assertThat(denial.decision().deciding().orElseThrow().identity())
				.isEqualTo("principal:alice"));
		authenticate("bob");
		assertThat(job.report()).isEqualTo("report");
	}

	@Test
	void aCallThatWaitsKeepsThePrincipalItWasMadeWithOnEveryCheck() {
		redis.flushAll();
		this.context = start();
		NightlyJob job = this.context.getBean(NightlyJob.class);
		authenticate("alice");
		Mono<String> first = job.quote();
		Mono<String> second = job.quote();
		SecurityContextHolder.clearContext();
		// the second waits for alice's next turn: its later checks run on a timer thread without a security context
		assertThat(first.block()).isEqualTo("quote");
		assertThat(second.block()).isEqualTo("quote");
	}

	@Test
	void aBlockingCallThatWaitsKeepsTheKeyItsThreadGaveOnEveryCheck() {
		redis.flushAll();
		this.context = start();
		NightlyJob job = this.context.getBean(NightlyJob.class);
		JobApplication.TENANT.set("acme");
		try {
			assertThat(job.tenantQuote()).isEqualTo("quote");
			// denied at first: waits for acme's next turn; the key was resolved on this thread, once
			assertThat(job.tenantQuote()).isEqualTo("quote");
		}
		finally {
			JobApplication.TENANT.remove();
		}
	}

	private static void authenticate(String user) {
		SecurityContextHolder.getContext().setAuthentication(new TestingAuthenticationToken(user, "n/a", "ROLE_USER"));
	}

	private static ConfigurableApplicationContext start() {
		// per-tenant-quote: the tenant comes from the calling thread (JobApplication's key resolver); a retry that
		// asked again on another thread would find none and be denied (missing-key: deny)
		return new SpringApplication(JobApplication.class).run("--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--ratelimit.policies.per-tenant-quote.algorithm=gcra",
				"--ratelimit.policies.per-tenant-quote.limit=1", "--ratelimit.policies.per-tenant-quote.window=300ms",
				"--ratelimit.policies.per-tenant-quote.key=@tenantKey",
				"--ratelimit.policies.per-tenant-quote.missing-key=deny",
				"--ratelimit.policies.per-tenant-quote.max-wait=10s");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableScheduling
	static class JobApplication {

		/** The tenant of the calling thread, as an application's own context holder keeps it. */
		static final ThreadLocal<String> TENANT = new ThreadLocal<>();

		final List<Throwable> denials = new CopyOnWriteArrayList<>();

		@Bean
		KeyResolver tenantKey() {
			return (request) -> TENANT.get();
		}

		@Bean
		NightlyJob nightlyJob() {
			return new NightlyJob();
		}

		/** The scheduler's error handler records what the job threw (it would log it otherwise). */
		@Bean
		ThreadPoolTaskScheduler taskScheduler() {
			ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
			scheduler.setErrorHandler(this.denials::add);
			return scheduler;
		}

	}

}
