package io.github.ratelimit.it.security;

import java.security.Principal;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configurers.AbstractHttpConfigurer;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application with form login and HTTP Basic, and the login-limiting recipe ({@code application.yml},
 * {@link LoginUsername}).
 */
@SpringBootApplication
public class SecuredApplication {

	@Bean
	SecurityFilterChain security(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().authenticated())
			.formLogin(Customizer.withDefaults())
			.httpBasic(Customizer.withDefaults())
			.csrf(AbstractHttpConfigurer::disable)
			.build();
	}

	@Bean
	UserDetailsService users() {
		return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}alice-secret").build(),
				User.withUsername("bob").password("{noop}bob-secret").build());
	}

	@RestController
	static class HelloController {

		@GetMapping("/api/hello")
		String hello(Principal principal) {
			return "hello " + principal.getName();
		}

	}

}
