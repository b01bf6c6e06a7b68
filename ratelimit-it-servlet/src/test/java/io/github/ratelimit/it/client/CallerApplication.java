package io.github.ratelimit.it.client;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/** A client instance: a plain application whose RateLimitedClients bean the test applies to its RestClients. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class CallerApplication {

}
