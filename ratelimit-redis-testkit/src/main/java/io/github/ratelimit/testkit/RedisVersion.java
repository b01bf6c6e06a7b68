package io.github.ratelimit.testkit;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The version of a {@code redis-server} executable.
 *
 * @param major the major version
 * @param minor the minor version
 * @param patch the patch version
 */
public record RedisVersion(int major, int minor, int patch) implements Comparable<RedisVersion> {

	private static final Pattern VERSION_OUTPUT = Pattern.compile("v=(\\d+)\\.(\\d+)\\.(\\d+)");

	/**
	 * Parses the output of {@code redis-server --version}, for example
	 * {@code Redis server v=6.2.11 sha=00000000:0 malloc=jemalloc-5.1.0 bits=64 build=...}.
	 * @param versionOutput the output of {@code redis-server --version}
	 * @return the version, or {@code null} if the output contains no version
	 */
	public static @Nullable RedisVersion parse(String versionOutput) {
		Matcher matcher = VERSION_OUTPUT.matcher(versionOutput);
		if (!matcher.find()) {
			return null;
		}
		return new RedisVersion(Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2)),
				Integer.parseInt(matcher.group(3)));
	}

	/**
	 * Returns whether this version is the given version or newer.
	 * @param major the required major version
	 * @param minor the required minor version
	 * @return {@code true} if this version is at least {@code major.minor}
	 */
	public boolean isAtLeast(int major, int minor) {
		return compareTo(new RedisVersion(major, minor, 0)) >= 0;
	}

	@Override
	public int compareTo(RedisVersion other) {
		int result = Integer.compare(this.major, other.major);
		if (result == 0) {
			result = Integer.compare(this.minor, other.minor);
		}
		return (result != 0) ? result : Integer.compare(this.patch, other.patch);
	}

	@Override
	public String toString() {
		return this.major + "." + this.minor + "." + this.patch;
	}

}
