package io.github.ratelimit.testkit;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisBinaryTests {

	@Test
	void locatesAnExecutableOfAtLeastRedis62() {
		RedisBinary binary = RedisBinary.get();
		assertThat(Files.isExecutable(binary.executable())).isTrue();
		assertThat(binary.version().isAtLeast(6, 2)).isTrue();
		assertThat(RedisBinary.get()).isSameAs(binary);
	}

	@Test
	void parsesVersionOutput() {
		assertThat(RedisVersion.parse("Redis server v=6.2.11 sha=00000000:0 malloc=jemalloc-5.1.0 bits=64"))
			.isEqualTo(new RedisVersion(6, 2, 11));
		assertThat(RedisVersion.parse("redis-server: error while loading shared libraries")).isNull();
		assertThat(new RedisVersion(6, 0, 16).isAtLeast(6, 2)).isFalse();
		assertThat(new RedisVersion(7, 0, 0).isAtLeast(6, 2)).isTrue();
	}

	@Test
	void picksEmbeddedBinaryByPlatform() {
		assertThat(EmbeddedBinaries.resourceFor("Linux", "amd64")).isEqualTo("redis-server-6.2.6-v5-linux-amd64");
		assertThat(EmbeddedBinaries.resourceFor("Linux", "aarch64")).isEqualTo("redis-server-6.2.7-linux-arm64");
		assertThat(EmbeddedBinaries.resourceFor("Mac OS X", "x86_64")).isEqualTo("redis-server-6.2.6-v5-darwin-amd64");
		assertThat(EmbeddedBinaries.resourceFor("Mac OS X", "aarch64")).isEqualTo("redis-server-6.2.6-v5-darwin-arm64");
		assertThat(EmbeddedBinaries.resourceFor("Windows 11", "amd64")).isNull();
	}

	@Test
	void extractsEmbeddedBinaryOnceAndItRuns() throws Exception {
		String resource = EmbeddedBinaries.resourceFor(System.getProperty("os.name"), System.getProperty("os.arch"));
		if (resource == null) {
			return; // no embedded binary for this platform; the other tests cover the binary in use
		}
		Path first = EmbeddedBinaries.extract(resource);
		long modified = Files.getLastModifiedTime(first).toMillis();
		Path second = EmbeddedBinaries.extract(resource);
		assertThat(second).isEqualTo(first);
		assertThat(Files.getLastModifiedTime(second).toMillis()).isEqualTo(modified);
		assertThat(first.getParent().getFileName().toString()).matches("[0-9a-f]{16}");
		RedisBinary.Candidate candidate = RedisBinary.verify(first, "test");
		assertThat(candidate.problem()).isNull();
		assertThat(candidate.binary()).isNotNull();
	}

}
