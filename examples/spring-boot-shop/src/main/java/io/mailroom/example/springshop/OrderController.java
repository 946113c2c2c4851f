package io.mailroom.example.springshop;

import io.mailroom.email.api.InvalidEmailException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import java.net.URI;
import java.util.Map;

/** {@code POST /orders}: places an order, whose confirmation email goes out once it is committed. */
@RestController
public class OrderController {

    private final OrderService service;

    public OrderController(OrderService service) {
        this.service = service;
    }

    @PostMapping("/orders")
    public ResponseEntity<Map<String, Object>> place(@RequestBody NewOrder order) {
        ShopOrder placed = service.place(order);
        return ResponseEntity.created(URI.create("/orders/" + placed.getId())).body(Map.of("id", placed.getId()));
    }

    @ExceptionHandler(InvalidEmailException.class)
    public ResponseEntity<Map<String, String>> invalid(InvalidEmailException e) {
        return ResponseEntity.status(HttpStatus.UNPROCESSABLE_CONTENT).body(Map.of("error", e.getMessage()));
    }
}
