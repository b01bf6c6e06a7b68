package io.github.ratelimit.it.support;

import java.net.http.HttpResponse;

/**
 * A GET to the application under test, as a stack's tests make it.
 */
@FunctionalInterface
public interface HttpGet {

	/**
	 * Sends a GET.
	 * @param path the path and query
	 * @param client the {@code X-Client} header (the identity of header-keyed policies)
	 * @return the response
	 */
	HttpResponse<String> get(String path, String client);

}
