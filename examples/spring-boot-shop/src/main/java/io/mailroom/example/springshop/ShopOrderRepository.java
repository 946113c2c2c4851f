package io.mailroom.example.springshop;

import org.springframework.data.jpa.repository.JpaRepository;

public interface ShopOrderRepository extends JpaRepository<ShopOrder, Long> {

    long countByCustomerEmail(String customerEmail);
}
