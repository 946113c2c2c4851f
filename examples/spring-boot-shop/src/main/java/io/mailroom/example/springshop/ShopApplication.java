package io.mailroom.example.springshop;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small Spring Boot shop that sends its order confirmations through Mailroom: its own tables and
 * Flyway migrations, JPA for its orders, and {@code mailroom-spring-boot-starter} for the emails,
 * which are written in the same transaction as the order they confirm.
 */
@SpringBootApplication
public class ShopApplication {

    public static void main(String[] args) {
        SpringApplication.run(ShopApplication.class, args);
    }
}
