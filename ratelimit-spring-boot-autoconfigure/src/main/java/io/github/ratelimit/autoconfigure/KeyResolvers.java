package io.github.ratelimit.autoconfigure;

import java.util.function.Supplier;

import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.RateLimitedCallInterceptor;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * Looks up the {@link KeyResolver} beans keys name ({@code @name}), on first use when named before the beans exist,
 * and tells the {@code ip} key how to group addresses ({@code ratelimit.ip.*}).
 */
final class KeyResolvers implements KeySpec.Resolvers {

	private final ConfigurableListableBeanFactory beanFactory;

	private final KeySpec.IpPrefixes prefixes;

	KeyResolvers(ConfigurableListableBeanFactory beanFactory, KeySpec.IpPrefixes prefixes) {
		this.beanFactory = beanFactory;
		this.prefixes = prefixes;
	}

	@Override
	public KeyResolver apply(String name) {
		if (!this.beanFactory.containsBean(name)) {
			throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
		}
		if (this.beanFactory.isConfigurationFrozen()) {
			return this.beanFactory.getBean(name, KeyResolver.class);
		}
		Supplier<KeyResolver> bean = RateLimitedCallInterceptor
			.once(() -> this.beanFactory.getBean(name, KeyResolver.class));
		return (request) -> bean.get().resolve(request);
	}

	@Override
	public KeySpec.IpPrefixes ipPrefixes() {
		return this.prefixes;
	}

}
