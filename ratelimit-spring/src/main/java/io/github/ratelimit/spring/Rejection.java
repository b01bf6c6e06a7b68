package io.github.ratelimit.spring;

import org.springframework.http.HttpHeaders;

/**
 * The response to a denied request, written by the servlet and the WebFlux filters alike.
 *
 * @param status the HTTP status
 * @param headers the headers, including {@code Content-Type} when there is a body
 * @param body the body bytes
 */
public record Rejection(int status, HttpHeaders headers, byte[] body) {

}
