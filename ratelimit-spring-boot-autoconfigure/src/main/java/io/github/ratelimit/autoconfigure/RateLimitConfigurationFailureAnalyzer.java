package io.github.ratelimit.autoconfigure;

import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.github.ratelimit.core.RateLimitPolicy.Limits;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.origin.Origin;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;

/**
 * Describes names under {@code ratelimit.} that no property has, each with its origin and the closest known name,
 * ahead of Spring Boot's own analysis (which suggests nothing). A name is walked along the types of
 * {@link RateLimitProperties}: a map takes any key, a collection an index, a properties record its components' names.
 */
class RateLimitConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException>
		implements Ordered {

	/** The prefix of every rate-limit property. */
	static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("ratelimit");

	/** Whether every element of a name under {@code ratelimit.} is known. */
	static boolean isKnown(ConfigurationPropertyName name) {
		return firstUnknown(name) == null;
	}

	/** The first element of a name that no property has, with the type above it; null when the name is known. */
	static @Nullable Unknown firstUnknown(ConfigurationPropertyName name) {
		ResolvableType type = ResolvableType.forClass(RateLimitProperties.class);
		for (int i = ROOT.getNumberOfElements(); i < name.getNumberOfElements(); i++) {
			Class<?> resolved = type.toClass();
			if (Map.class.isAssignableFrom(resolved)) {
				type = type.asMap().getGeneric(1);
				continue;
			}
			if (Collection.class.isAssignableFrom(resolved) && name.isNumericIndex(i)) {
				type = type.as(Collection.class).getGeneric(0);
				continue;
			}
			Method accessor = isPropertiesType(resolved) ? properties(resolved).get(name.getElement(i, Form.DASHED))
					: null;
			if (accessor == null) {
				return new Unknown(i, resolved);
			}
			type = ResolvableType.forMethodReturnType(accessor);
		}
		return null;
	}

	/** Whether a type's properties have names: the properties records, their nested records, {@link Limits}. */
	static boolean isPropertiesType(Class<?> type) {
		Class<?> outer = (type.getEnclosingClass() != null) ? type.getEnclosingClass() : type;
		return outer == RateLimitProperties.class || outer == PolicyProperties.class
				|| outer == RedisBackendProperties.class || type == Limits.class;
	}

	/** The accessors of a properties type's (a record's) properties, by dashed name, in a stable order. */
	static Map<String, Method> properties(Class<?> type) {
		Map<String, Method> properties = new TreeMap<>();
		for (RecordComponent component : type.getRecordComponents()) {
			properties.put(DataObjectPropertyName.toDashedForm(component.getName()), component.getAccessor());
		}
		return properties;
	}

	/** The first unknown element's index, and the type of the name before it. */
	record Unknown(int index, Class<?> parent) {
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
		Set<ConfigurationProperty> unbound = cause.getUnboundProperties();
		if (unbound.isEmpty() || !unbound.stream().allMatch((property) -> ROOT.isAncestorOf(property.getName()))) {
			return null;
		}
		boolean one = unbound.size() == 1;
		StringBuilder description = new StringBuilder("Unknown rate-limit " + (one ? "property" : "properties")
				+ ": no property of the starter has " + (one ? "this name, so it" : "these names, so they")
				+ " would be ignored.\n");
		StringBuilder action = new StringBuilder();
		for (ConfigurationProperty property : unbound) {
			Suggestion suggestion = suggest(property.getName());
			description.append("\n    Property: ").append(property.getName());
			description.append("\n    Value: \"").append(property.getValue()).append('"');
			Origin origin = property.getOrigin();
			if (origin != null) {
				description.append("\n    Origin: ").append(origin);
			}
			if (suggestion.replacement() != null) {
				description.append("\n    Did you mean: ").append(suggestion.replacement());
			}
			description.append('\n');
			action.append(action(property.getName(), suggestion));
		}
		action.append("Every rate-limit property is listed in the starter's configuration metadata (your IDE "
				+ "completes them) and in its configuration reference.");
		return new FailureAnalysis(description.toString(), action.toString(), cause);
	}

	private static String action(ConfigurationPropertyName name, Suggestion suggestion) {
		if (suggestion.replacement() != null) {
			return "Rename '" + name + "' to '" + suggestion.replacement() + "'.\n";
		}
		if (!suggestion.known().isEmpty()) {
			return "Replace or remove '" + name + "'. Known names after '" + suggestion.parent() + ".': "
					+ String.join(", ", suggestion.known()) + ".\n";
		}
		return "Remove '" + name + "': '" + suggestion.parent()
				+ (suggestion.list() ? "' is a list: its elements are named [0], [1] and so on.\n"
						: "' takes a single value.\n");
	}

	/** Proposes, for an unknown name, the closest known name in place of its first unknown element. */
	static Suggestion suggest(ConfigurationPropertyName name) {
		Unknown unknown = firstUnknown(name);
		if (unknown == null) {
			return new Suggestion(name.toString(), List.of(), null, false);
		}
		String parent = name.chop(unknown.index()).toString();
		if (!isPropertiesType(unknown.parent())) {
			return new Suggestion(parent, List.of(), null, Collection.class.isAssignableFrom(unknown.parent()));
		}
		List<String> known = new ArrayList<>(properties(unknown.parent()).keySet());
		String closest = closest(name.getElement(unknown.index(), Form.DASHED), known);
		return new Suggestion(parent, known, (closest != null) ? replace(name, unknown.index(), closest) : null,
				false);
	}

	/** The known name closest to an unknown one, if it is close enough to be a slip rather than another idea. */
	private static @Nullable String closest(String unknown, Collection<String> known) {
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		for (String candidate : new TreeSet<>(known)) {
			int distance = distance(unknown, candidate);
			if (distance < bestDistance) {
				best = candidate;
				bestDistance = distance;
			}
		}
		int tolerance = Math.max(2, Math.min(unknown.length(), (best != null) ? best.length() : 0) / 2);
		return (bestDistance <= tolerance) ? best : null;
	}

	/** Levenshtein distance: the fewest insertions, deletions and substitutions that turn one word into the other. */
	static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

	/** The name with one element replaced, written as in a properties file. */
	private static String replace(ConfigurationPropertyName name, int index, String replacement) {
		StringBuilder result = new StringBuilder();
		for (int i = 0; i < name.getNumberOfElements(); i++) {
			String element = (i == index) ? replacement : name.getElement(i, Form.ORIGINAL);
			boolean bracketed = name.isNumericIndex(i) || element.indexOf('.') >= 0
					|| !ConfigurationPropertyName.isValid(element);
			if (bracketed) {
				result.append('[').append(element).append(']');
			}
			else {
				result.append((i > 0) ? "." : "").append(element);
			}
		}
		return result.toString();
	}

	/**
	 * What an unknown name could have meant: the known parent, the names known below it (none for a value or a list),
	 * the whole name with the closest known element, if one is close, and whether the parent is a list.
	 */
	record Suggestion(String parent, List<String> known, @Nullable String replacement, boolean list) {
	}

}
