package io.github.ratelimit.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The {@code redis-server} binaries shipped as root resources of
 * {@code com.github.codemonstur:embedded-redis}, and their extraction to a content-addressed
 * directory under {@code java.io.tmpdir}. Extraction writes a temporary file and atomically moves
 * it into place, so concurrent JVMs (for example surefire forks) never see a partial binary.
 */
final class EmbeddedBinaries {

	private static final String LINUX_AMD64 = "redis-server-6.2.6-v5-linux-amd64";

	private static final String LINUX_ARM64 = "redis-server-6.2.7-linux-arm64";

	private static final String LINUX_386 = "redis-server-6.2.7-linux-386";

	private static final String DARWIN_AMD64 = "redis-server-6.2.6-v5-darwin-amd64";

	private static final String DARWIN_ARM64 = "redis-server-6.2.6-v5-darwin-arm64";

	private EmbeddedBinaries() {
	}

	/**
	 * Returns the resource name of the binary for a platform.
	 * @param osName the {@code os.name} system property
	 * @param osArch the {@code os.arch} system property
	 * @return the resource name, or {@code null} if no binary for the platform is shipped
	 */
	static @Nullable String resourceFor(String osName, String osArch) {
		String os = normalize(osName);
		String arch = normalize(osArch);
		boolean amd64 = arch.equals("amd64") || arch.equals("x8664");
		boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
		boolean x86 = arch.equals("x86") || arch.equals("i386") || arch.equals("i686");
		if (os.startsWith("linux")) {
			return amd64 ? LINUX_AMD64 : arm64 ? LINUX_ARM64 : x86 ? LINUX_386 : null;
		}
		if (os.startsWith("macos") || os.startsWith("darwin")) {
			return amd64 ? DARWIN_AMD64 : arm64 ? DARWIN_ARM64 : null;
		}
		return null;
	}

	/**
	 * Extracts a binary (at most once per content) and returns the executable path.
	 * @param resource the resource name
	 * @return the extracted, executable file
	 * @throws IOException if the resource is missing or cannot be written
	 */
	static Path extract(String resource) throws IOException {
		byte[] content = read(resource);
		String hash = sha256(content);
		Path directory = Paths.get(System.getProperty("java.io.tmpdir"),
				"ratelimit-redis-testkit-" + System.getProperty("user.name", "user"), hash.substring(0, 16));
		Path target = directory.resolve(resource);
		if (Files.isRegularFile(target) && Files.isExecutable(target) && hash.equals(sha256(Files.readAllBytes(target)))) {
			return target;
		}
		Files.createDirectories(directory);
		Path temporary = Files.createTempFile(directory, resource + "-", ".tmp");
		try {
			Files.write(temporary, content);
			if (!temporary.toFile().setExecutable(true, false)) {
				throw new IOException("Could not make " + temporary + " executable");
			}
			moveIntoPlace(temporary, target);
		}
		finally {
			Files.deleteIfExists(temporary);
		}
		return target;
	}

	private static void moveIntoPlace(Path temporary, Path target) throws IOException {
		try {
			Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE);
		}
		catch (AtomicMoveNotSupportedException ex) {
			Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
		}
	}

	private static byte[] read(String resource) throws IOException {
		ClassLoader classLoader = EmbeddedBinaries.class.getClassLoader();
		try (InputStream in = (classLoader != null) ? classLoader.getResourceAsStream(resource)
				: ClassLoader.getSystemResourceAsStream(resource)) {
			if (in == null) {
				throw new IOException("Resource " + resource
						+ " not found: is com.github.codemonstur:embedded-redis on the classpath?");
			}
			return in.readAllBytes();
		}
	}

	private static String sha256(byte[] content) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

	/** Lower-cases and strips punctuation for locale-independent matching of platform names. */
	private static String normalize(String value) {
		return value.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
	}

}
