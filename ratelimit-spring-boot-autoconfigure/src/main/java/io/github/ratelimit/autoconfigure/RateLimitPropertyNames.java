package io.github.ratelimit.autoconfigure;

import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

import io.github.ratelimit.core.RateLimitPolicy.Limits;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
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

	/**
	 * Whether a name is one that a rate-limit property has.
	 * @param name a name under {@code ratelimit.}
	 * @return true when every element of the name is known
	 */
	static boolean isKnown(ConfigurationPropertyName name) {
		return firstUnknown(name) == null;
	}

	/**
	 * Walks a name along the types of the properties to the first element that none has.
	 * @param name a name under {@code ratelimit.}
	 * @return that element and the type above it, or null when the whole name is known
	 */
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

	/**
	 * Whether a type is one whose properties have names: {@link RateLimitProperties}, {@link PolicyProperties},
	 * {@link RedisBackendProperties}, one of their classes, or {@link Limits}.
	 * @param type the type
	 * @return true for a type with named properties
	 */
	static boolean isPropertiesType(Class<?> type) {
		Class<?> outer = (type.getEnclosingClass() != null) ? type.getEnclosingClass() : type;
		return outer == RateLimitProperties.class || outer == PolicyProperties.class
				|| outer == RedisBackendProperties.class || type == Limits.class;
	}

	/**
	 * The bound properties of a type, by their dashed names, in a stable order, with what reads each.
	 * @param type a type with named properties ({@link #isPropertiesType})
	 * @return the accessors by name
	 */
	static Map<String, Method> properties(Class<?> type) {
		Map<String, Method> properties = new TreeMap<>();
		if (type.isRecord()) {
			for (RecordComponent component : type.getRecordComponents()) {
				properties.put(dashed(component.getName()), component.getAccessor());
			}
			return properties;
		}
		for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
			Method getter = descriptor.getReadMethod();
			if (getter != null && !descriptor.getName().equals("class")) {
				properties.put(dashed(descriptor.getName()), getter);
			}
		}
		return properties;
	}

	private static String dashed(String camelCase) {
		StringBuilder dashed = new StringBuilder();
		for (char c : camelCase.toCharArray()) {
			if (Character.isUpperCase(c)) {
				dashed.append('-').append(Character.toLowerCase(c));
			}
			else {
				dashed.append(c);
			}
		}
		return dashed.toString();
	}

	/**
	 * The first element of a name that no property has.
	 * @param index its index in the name
	 * @param parent the type of the name before it: a properties class, a list that needed an index, or a type that
	 * takes a single value
	 */
	record Unknown(int index, Class<?> parent) {
	}

}
