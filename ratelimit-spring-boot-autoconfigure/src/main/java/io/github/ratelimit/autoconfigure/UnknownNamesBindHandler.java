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
 * Spring Boot's {@link NoUnboundElementsBindHandler}, except that a name in a list another source replaced (which
 * Boot may report though valid) is judged by the properties' types, so only a misspelt one fails the binding
 * (architecture, "Configuration is bound and checked once").
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
				if (!inReplacedList(property) || !RateLimitConfigurationFailureAnalyzer.isKnown(property.getName())) {
					unknown.add(property);
				}
			}
			if (!unknown.isEmpty()) {
				throw new UnboundConfigurationPropertiesException(unknown);
			}
		}
	}

	/** Whether a name lies in a list Spring Boot took from another source or from a single (comma-separated) value. */
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
