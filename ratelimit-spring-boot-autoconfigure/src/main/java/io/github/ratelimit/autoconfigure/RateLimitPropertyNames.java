package io.github.ratelimit.autoconfigure;

import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

import io.github.ratelimit.core.RateLimitPolicy.Limits;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.core.ResolvableType;

/**
 * The names {@link RateLimitProperties} has, found by walking a name along the types of its properties: a map takes
 * any key, a list or set an index, a properties class ({@link #isPropertiesType}) the names of its properties, any
 * other type a single value.
 */
final class RateLimitPropertyNames {

	/** The prefix of every rate-limit property. */
	static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("ratelimit");

	private RateLimitPropertyNames() {
	}

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

}
