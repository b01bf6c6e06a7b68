/**
 * What the servlet and the WebFlux integration tests share: web-contract scenarios written once against an HTTP
 * entry point ({@link io.github.ratelimit.it.support.HttpGet}), run by each stack's tests on its own application.
 */
package io.github.ratelimit.it.support;
