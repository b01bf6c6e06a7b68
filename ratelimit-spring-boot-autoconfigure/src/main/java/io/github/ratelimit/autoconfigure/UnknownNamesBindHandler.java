package io.github.ratelimit.autoconfigure;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.UnboundElementsSourceFilter;

/**
 * Fails the binding of {@code ratelimit.*} on names that no property has: Spring Boot's own check
 * ({@link NoUnboundElementsBindHandler}, environment variables and system properties left out as with
 * {@code ignoreUnknownFields = false}), corrected for the lists one source replaces.
 *
 * <p>Spring Boot binds a list whole from the source of highest precedence that has it (a profile document over the
 * base one, say); the lists of the other sources are never bound. Its check excuses most of their names, but not
 * those ending in an index whose list the winning elements lack ({@code rules[2].paths[0]} of a base list of three
 * rules under a profile's two): it takes them for unknown, and refuses a valid configuration. Here a name of a
 * replaced list is judged by the types of the properties instead, so only a misspelt one is reported.
 */
final class UnknownNamesBindHandler extends AbstractBindHandler {

	/** The source each list's elements were bound from (Spring Boot binds them from one), by the list's name. */
	private final Map<ConfigurationPropertyName, Object> listSources = new HashMap<>();

	UnknownNamesBindHandler() {
		super(new NoUnboundElementsBindHandler(BindHandler.DEFAULT, new UnboundElementsSourceFilter()));
	}

	@Override
	public @Nullable Object onSuccess(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
			Object result) {
		Object source = name.isLastElementIndexed() ? onlySource(context) : null;
		if (source != null) {
			this.listSources.putIfAbsent(name.chop(name.getNumberOfElements() - 1), source);
		}
		return super.onSuccess(name, target, context, result);
	}

	@Override
	public void onFinish(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
			@Nullable Object result) throws Exception {
		try {
			super.onFinish(name, target, context, result);
		}
		catch (UnboundConfigurationPropertiesException ex) {
			Set<ConfigurationProperty> unknown = new TreeSet<>();
			for (ConfigurationProperty property : ex.getUnboundProperties()) {
				if (!inReplacedList(property) || !RateLimitPropertyNames.isKnown(property.getName())) {
					unknown.add(property);
				}
			}
			if (!unknown.isEmpty()) {
				throw new UnboundConfigurationPropertiesException(unknown);
			}
		}
	}

	/**
	 * Whether a name lies in a list that Spring Boot took from another source, or from a single value (comma
	 * separated, or an empty list): its own source's elements of that list are then never bound.
	 */
	private boolean inReplacedList(ConfigurationProperty property) {
		ConfigurationPropertyName name = property.getName();
		Object source = (property.getSource() != null) ? property.getSource().getUnderlyingSource() : null;
		if (source == null) {
			return false;
		}
		for (int i = 1; i < name.getNumberOfElements(); i++) {
			if (name.isNumericIndex(i) && !source.equals(this.listSources.get(name.chop(i)))) {
				return true;
			}
		}
		return false;
	}

	/** The one source (its property source) Spring Boot binds from, as it does for the elements of a list. */
	private static @Nullable Object onlySource(BindContext context) {
		Iterator<ConfigurationPropertySource> sources = context.getSources().iterator();
		ConfigurationPropertySource first = sources.hasNext() ? sources.next() : null;
		return (first == null || sources.hasNext()) ? null : first.getUnderlyingSource();
	}

}
