package io.github.ratelimit.autoconfigure;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingFilterBean;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Boot's conventions for the starter's auto-configurations (those its imports file lists): each is public and
 * final, and every bean it declares, itself or through its nested and imported configurations, is package-private
 * and backs off for the application's own.
 */
class AutoConfigurationConventionsTests {

	@Test
	void autoConfigurationsArePublicAndFinalAndTheirBeansArePackagePrivateAndBackOff() throws Exception {
		List<String> names = ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader())
			.getCandidates()
			.stream()
			.filter((name) -> name.startsWith("io.github.ratelimit.autoconfigure."))
			.toList();
		assertThat(names).contains(RateLimitAutoConfiguration.class.getName());
		List<String> violations = new ArrayList<>();
		for (String name : names) {
			Class<?> type = Class.forName(name);
			if (!Modifier.isPublic(type.getModifiers()) || !Modifier.isFinal(type.getModifiers())) {
				violations.add(name + " is not public final");
			}
			for (Class<?> configuration : configurations(type, new LinkedHashSet<>())) {
				for (Method method : configuration.getDeclaredMethods()) {
					if (method.isAnnotationPresent(Bean.class)) {
						violations.addAll(beanViolations(configuration, method));
					}
				}
			}
		}
		assertThat(violations).isEmpty();
	}

	private static List<String> beanViolations(Class<?> configuration, Method method) {
		String bean = configuration.getName() + "." + method.getName();
		List<String> violations = new ArrayList<>();
		if (Modifier.isPublic(method.getModifiers()) || Modifier.isProtected(method.getModifiers())) {
			violations.add(bean + " is not package-private");
		}
		if (!method.isAnnotationPresent(ConditionalOnMissingBean.class)
				&& !method.isAnnotationPresent(ConditionalOnMissingFilterBean.class)) {
			violations.add(bean + " does not back off for the application's own");
		}
		return violations;
	}

	/** The class, the configurations it imports and its nested ones, each once. */
	private static Set<Class<?>> configurations(Class<?> type, Set<Class<?>> found) {
		if (found.add(type)) {
			Import imports = type.getAnnotation(Import.class);
			for (Class<?> imported : (imports != null) ? imports.value() : new Class<?>[0]) {
				configurations(imported, found);
			}
			for (Class<?> nested : type.getDeclaredClasses()) {
				if (nested.isAnnotationPresent(Configuration.class)) {
					configurations(nested, found);
				}
			}
		}
		return found;
	}

}
