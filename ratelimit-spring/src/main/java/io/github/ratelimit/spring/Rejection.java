package io.github.ratelimit.spring;

import org.springframework.http.HttpHeaders;

/** The response to a denied request: status, headers ({@code Content-Type} with a body) and body bytes. */
public record Rejection(int status, HttpHeaders headers, byte[] body) {

}
