package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.github.ratelimit.core.FailureMode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.configurationmetadata.ConfigurationMetadataProperty;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataRepository;
import org.springframework.boot.configurationmetadata.ConfigurationMetadataRepositoryJsonBuilder;
import org.springframework.boot.configurationmetadata.Deprecation;
import org.springframework.boot.configurationmetadata.ValueHint;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.core.convert.ConversionService;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata the starter ships (what IDEs complete and explain), read the way IDEs read it: every
 * property described, every default the one the code has, every hinted value one the binder accepts.
 */
class ConfigurationMetadataTests {

	private static final ConversionService conversion = ApplicationConversionService.getSharedInstance();

	private static Map<String, ConfigurationMetadataProperty> properties;

	/** Every property, the Actuator endpoint's and deprecated ones included. */
	private static Map<String, ConfigurationMetadataProperty> allProperties;

	@BeforeAll
	static void readMetadata() throws IOException {
		try (InputStream metadata = ConfigurationMetadataTests.class
			.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(metadata).as("generated metadata").isNotNull();
			ConfigurationMetadataRepository repository = ConfigurationMetadataRepositoryJsonBuilder.create(metadata)
				.build();
			allProperties = repository.getAllProperties();
			properties = repository.getAllProperties()
				.entrySet()
				.stream()
				.filter((entry) -> entry.getKey().startsWith("ratelimit."))
				.collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
		}
	}

	@Test
	void everyPropertyIsDescribed() {
		assertThat(properties).containsKeys("ratelimit.enabled", "ratelimit.policies", "ratelimit.filter.rules",
				"ratelimit.redis.timeout", "ratelimit.failure-mode");
		assertThat(properties.values()).allSatisfy((property) -> assertThat(property.getDescription())
			.as(property.getId())
			.isNotBlank());
	}

	@Test
	void everyScalarPropertyDeclaresTheDefaultTheCodeHas() throws ReflectiveOperationException {
		RateLimitProperties defaults = new Binder().bindOrCreate("ratelimit", RateLimitProperties.class);
		List<String> checked = new ArrayList<>();
		for (ConfigurationMetadataProperty property : properties.values()) {
			if (property.getType().startsWith("java.util.")) {
				continue;
			}
			Object actual = defaults;
			Class<?> type = RateLimitProperties.class;
			for (String element : property.getId().substring("ratelimit.".length()).split("\\.")) {
				Method accessor = type.getMethod(camelCase(element));
				type = accessor.getReturnType();
				actual = accessor.invoke(actual);
			}
			if (actual == null) {
				// unset by default (a secret, an opt-in): the metadata must not claim a value
				assertThat(property.getDefaultValue()).as("default of " + property.getId()).isNull();
				continue;
			}
			assertThat(property.getDefaultValue()).as("default of " + property.getId()).isNotNull();
			Object declared = conversion.convert(property.getDefaultValue(),
					ClassUtils.resolvePrimitiveIfNecessary(type));
			assertThat(declared).as("default of " + property.getId()).isEqualTo(actual);
			checked.add(property.getId());
		}
		assertThat(checked).contains("ratelimit.key-prefix", "ratelimit.filter.order", "ratelimit.local.maximum-keys",
				"ratelimit.failure-mode", "ratelimit.redis.circuit-breaker.wait-duration-in-open-state");
	}

	@Test
	void failureModeHintsAreExactlyTheModesTheBinderAccepts() {
		List<ValueHint> hints = properties.get("ratelimit.failure-mode").getHints().getValueHints();
		Set<FailureMode> hinted = hints.stream()
			.map((hint) -> conversion.convert(hint.getValue(), FailureMode.class))
			.collect(Collectors.toSet());
		assertThat(hinted).isEqualTo(EnumSet.allOf(FailureMode.class));
		assertThat(hints).allSatisfy((hint) -> assertThat(hint.getDescription()).isNotBlank());
	}

	/**
	 * What the configuration reference promises from 0.1.0 on: a property of a release that is gone is declared
	 * deprecated, with its replacement (level warning: the old name still works) or removed (level error).
	 */
	@Test
	void everyPropertyOfTheLastReleaseIsStillThereOrDeclaredDeprecated() throws IOException {
		List<String> released;
		try (InputStream list = ConfigurationMetadataTests.class.getResourceAsStream("/released-properties.txt")) {
			assertThat(list).as("released-properties.txt").isNotNull();
			released = new String(list.readAllBytes(), StandardCharsets.UTF_8).lines()
				.filter((line) -> !line.isBlank() && !line.startsWith("#"))
				.toList();
		}
		assertThat(released).contains("ratelimit.enabled", "ratelimit.redis.timeout");
		assertThat(released).allSatisfy((name) -> assertThat(allProperties).as("a property of the last release")
			.containsKey(name));
		for (ConfigurationMetadataProperty property : allProperties.values()) {
			Deprecation deprecation = property.getDeprecation();
			if (deprecation == null) {
				continue;
			}
			if (deprecation.getLevel() == Deprecation.Level.ERROR) {
				assertThat(deprecation.getReason()).as("why %s was removed", property.getId()).isNotBlank();
			}
			else {
				assertThat(allProperties).as("the replacement of " + property.getId())
					.containsKey(deprecation.getReplacement());
			}
		}
	}

	private static String camelCase(String dashed) {
		StringBuilder result = new StringBuilder();
		boolean upper = false;
		for (char c : dashed.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				result.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return result.toString();
	}

}
