package io.github.ratelimit.autoconfigure;

import java.util.function.Function;

import io.github.ratelimit.spring.KeyResolver;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;

/**
 * Looks up {@link KeyResolver} beans named in keys as {@code @name}.
 */
final class KeyResolvers {

	private KeyResolvers() {
	}

	static Function<String, KeyResolver> beans(BeanFactory beanFactory) {
		return (name) -> {
			try {
				return beanFactory.getBean(name, KeyResolver.class);
			}
			catch (NoSuchBeanDefinitionException ex) {
				throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'", ex);
			}
		};
	}

}
