package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

class PartnerHeadersTests {

	private static final long NOW = 1_800_000_000_000L;

	@Test
	void standardFieldsWithSeveralPoliciesAndPartitions() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit-Policy", "\"burst\";q=100;w=60;pk=:AQID:, \"daily\";q=1000;w=86400");
		headers.add("RateLimit", "\"burst\";r=3;t=12;pk=:AQID:");
		headers.add("RateLimit", "\"daily\";r=500;t=3600");
		PartnerResponse response = PartnerHeaders.read(headers, 200, NOW, 86_400);
		assertThat(response.quotas()).containsExactly(new PartnerQuota("burst", "AQID", 3, 12, 100L, 60L),
				new PartnerQuota("daily", "", 500, 3600, 1000L, 86400L));
		assertThat(response.retryAfter()).isNull();
	}

	@Test
	void aPolicyOfAnotherPartitionGivesNoLimit() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit-Policy", "\"burst\";q=100;w=60;pk=:AQID:");
		headers.add("RateLimit", "burst;r=3;t=12;pk=:BBBB:");
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas())
			.containsExactly(new PartnerQuota("burst", "BBBB", 3, 12, null, null));
	}

	@Test
	void legacyFieldsWithAnEpochOrARelativeReset() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("X-RateLimit-Limit", "10");
		headers.add("X-RateLimit-Remaining", "4");
		headers.add("X-RateLimit-Reset", Long.toString(NOW / 1000 + 30));
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas())
			.containsExactly(new PartnerQuota(PartnerHeaders.LEGACY_POLICY, "", 4, 30, 10L, null));
		headers.set("X-RateLimit-Reset", "7");
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas().get(0).resetSeconds()).isEqualTo(7);
	}

	@Test
	void standardFieldsWinOverLegacyOnes() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit", "\"p\";r=1;t=2");
		headers.add("X-RateLimit-Remaining", "4");
		headers.add("X-RateLimit-Reset", "5");
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas()).extracting(PartnerQuota::policy)
			.containsExactly("p");
	}

	@Test
	void retryAfterInSecondsOrAsAnHttpDateAgainstTheResponsesDate() {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, "12");
		assertThat(PartnerHeaders.read(headers, 429, NOW).retryAfter()).isEqualTo(Duration.ofSeconds(12));
		assertThat(PartnerHeaders.read(headers, 200, NOW).retryAfter()).isNull();
		long partnerClock = NOW - 3_600_000; // the partner's clock is an hour behind ours: only its Date counts
		headers.setDate(partnerClock);
		headers.set(HttpHeaders.RETRY_AFTER, DateTimeFormatter.RFC_1123_DATE_TIME
			.format(Instant.ofEpochMilli(partnerClock + 5000).atOffset(ZoneOffset.UTC)));
		assertThat(PartnerHeaders.read(headers, 503, NOW).retryAfter()).isEqualTo(Duration.ofSeconds(5));
	}

	@Test
	void retryAfterAsAnRfc850OrAsctimeDate() {
		HttpHeaders headers = new HttpHeaders();
		headers.setDate(NOW);
		Instant at = Instant.ofEpochMilli(NOW + 7000);
		headers.set(HttpHeaders.RETRY_AFTER, DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US)
			.format(at.atOffset(ZoneOffset.UTC)));
		assertThat(PartnerHeaders.read(headers, 429, NOW).retryAfter()).isEqualTo(Duration.ofSeconds(7));
		headers.set(HttpHeaders.RETRY_AFTER, DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US)
			.format(at.atOffset(ZoneOffset.UTC)));
		assertThat(PartnerHeaders.read(headers, 429, NOW).retryAfter()).isEqualTo(Duration.ofSeconds(7));
		headers.set(HttpHeaders.RETRY_AFTER, "Sun Nov  6 08:49:37 1994"); // single-digit day, long past
		assertThat(PartnerHeaders.read(headers, 429, NOW).retryAfter()).isEqualTo(Duration.ZERO);
	}

	@Test
	void aResetInEpochMillisecondsAndLongWaitsAreCappedAtTheBelievedMaximum() {
		HttpHeaders headers = new HttpHeaders();
		headers.setDate(NOW);
		headers.add("X-RateLimit-Remaining", "0");
		headers.add("X-RateLimit-Reset", Long.toString(NOW + 30_000));
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas().get(0).resetSeconds()).isEqualTo(30);
		headers.set("X-RateLimit-Reset", "86400");
		headers.set(HttpHeaders.RETRY_AFTER, "86400");
		PartnerResponse response = PartnerHeaders.read(headers, 503, NOW, 120);
		assertThat(response.quotas().get(0).resetSeconds()).isEqualTo(120);
		assertThat(response.retryAfter()).isEqualTo(Duration.ofSeconds(120));
	}

	@Test
	void withoutTNoneLeftIsHonouredUntilTheWindowElseASecond() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit-Policy", "\"a\";q=10;w=30");
		headers.add("RateLimit", "\"a\";r=0, \"b\";r=0, \"c\";r=5");
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas()).containsExactly(
				new PartnerQuota("a", "", 0, 30, 10L, 30L), new PartnerQuota("b", "", 0, 1, null, null));
	}

	@Test
	void aQuotaOfAnotherUnitIsNotPacedAsRequestsButItsExhaustionIsHonoured() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit-Policy", "\"bytes\";q=65536;qu=\"content-bytes\";w=10, \"req\";q=100;qu=\"requests\"");
		headers.add("RateLimit", "\"bytes\";r=1000;t=5, \"req\";r=9;t=5");
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas())
			.containsExactly(new PartnerQuota("req", "", 9, 5, 100L, null));
		headers.set("RateLimit", "\"bytes\";r=0;t=5");
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas())
			.containsExactly(new PartnerQuota("bytes", "", 0, 5, null, 10L));
	}

	@Test
	void aPartitionedItemFallsBackToThePolicyWithoutAPartition() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit-Policy", "\"burst\";q=100;w=60");
		headers.add("RateLimit", "\"burst\";r=3;t=12;pk=:BBBB:");
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas())
			.containsExactly(new PartnerQuota("burst", "BBBB", 3, 12, 100L, 60L));
	}

	@Test
	void datesAndDisplayStringsInVendorParametersDoNotDiscardTheField() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit-Policy", "\"p\";q=10;w=60;since=@1700000000;note=%\"caf%c3%a9\"");
		headers.add("RateLimit", "\"p\";r=4;t=6;at=@1700000000");
		assertThat(PartnerHeaders.read(headers, 200, NOW).quotas())
			.containsExactly(new PartnerQuota("p", "", 4, 6, 10L, 60L));
		assertThat(StructuredFields.list("a;note=%\"caf%c3%a9\"").get(0)).isEqualTo(new StructuredFields.Item(
				new StructuredFields.Token("a"), java.util.Map.of("note", new StructuredFields.DisplayString("caf\u00e9"))));
	}

	@Test
	void hostileValuesAreNeutralised() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit", "\"" + "x".repeat(500) + "\";r=1;t=99999999;pk=\"a{b} c\", \"neg\";r=-1;t=2, "
				+ "\"big\";r=1;t=1;pk=:" + "A".repeat(100) + ":");
		headers.set(HttpHeaders.RETRY_AFTER, "999999999");
		PartnerResponse response = PartnerHeaders.read(headers, 429, NOW);
		assertThat(response.quotas()).hasSize(2);
		PartnerQuota first = response.quotas().get(0);
		assertThat(first.policy()).startsWith("sha256-").hasSizeLessThan(40);
		assertThat(first.partition()).startsWith("sha256-");
		assertThat(first.resetSeconds()).isEqualTo(PartnerHeaders.MAX_SECONDS);
		assertThat(response.quotas().get(1).partition()).startsWith("sha256-");
		assertThat(response.retryAfter()).isEqualTo(Duration.ofSeconds(PartnerHeaders.MAX_SECONDS));
	}

	@Test
	void invalidFieldsAreIgnoredWhole() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit", "\"p\";r=1;t=2,");
		headers.set(HttpHeaders.RETRY_AFTER, "soon");
		PartnerResponse response = PartnerHeaders.read(headers, 429, NOW);
		assertThat(response.quotas()).isEmpty();
		assertThat(response.retryAfter()).isNull();
	}

}
