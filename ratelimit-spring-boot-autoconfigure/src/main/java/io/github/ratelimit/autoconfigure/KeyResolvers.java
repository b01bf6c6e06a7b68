package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.spring.KeyResolver;
import io.github.ratelimit.spring.KeySpec;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;

/**
 * Looks up {@link KeyResolver} beans named in keys as {@code @name}, and tells the {@code ip} key how to group
 * addresses ({@code ratelimit.ip.*}).
 */
final class KeyResolvers {

	private KeyResolvers() {
	}

	static KeySpec.Resolvers beans(BeanFactory beanFactory, RateLimitProperties properties) {
		KeySpec.IpPrefixes prefixes = properties.getIp().prefixes();
		return new KeySpec.Resolvers() {

			@Override
			public KeyResolver apply(String name) {
				try {
					return beanFactory.getBean(name, KeyResolver.class);
				}
				catch (NoSuchBeanDefinitionException ex) {
					throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'", ex);
				}
			}

			@Override
			public KeySpec.IpPrefixes ipPrefixes() {
				return prefixes;
			}

		};
	}

}
