package com.example.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A user's application: two endpoints limited by the starter's filter rules (application.yml). */
@SpringBootApplication
@RestController
public class OrdersApplication {

	public static void main(String[] args) {
		SpringApplication.run(OrdersApplication.class, args);
	}

	@GetMapping("/api/orders")
	String orders() {
		return "orders";
	}

	@GetMapping("/api/payments")
	String payments() {
		return "payments";
	}

}
