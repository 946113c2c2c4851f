package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonProperty;

import java.util.Locale;
import java.util.Objects;

/**
 * The business entity an email is about, as the business named it at enqueue: {@code order 102},
 * {@code user 42}, {@code invoice 2026-17}. Support shows it by its own type and never assumes an
 * order.
 *
 * @param type the entity's type as stored ({@code order}, {@code user}, {@code invoice}, {@code tenant.account})
 * @param id   the entity's id as stored
 */
public record About(String type, String id) {

    public About {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(id, "id");
    }

    /** The type in words, capitalised: {@code order} → "Order", {@code gift_card} → "Gift card". */
    @JsonProperty("typeText")
    public String typeText() {
        String t = type.replace('_', ' ').replace('-', ' ').trim();
        if (t.isEmpty()) {
            return type;
        }
        return t.substring(0, 1).toUpperCase(Locale.ROOT) + t.substring(1);
    }

    /** How a person names it: "Order 102", "User 42", "Invoice 2026-17". */
    @JsonProperty("label")
    public String label() {
        return typeText() + " " + id;
    }

    /** The console page listing every email about it. */
    @JsonProperty("consoleUrl")
    public String consoleUrl() {
        return "/console/about?" + SupportParams.ABOUT_TYPE + "=" + ConsolePages.url(type) + "&" + SupportParams.ABOUT_ID
                + "=" + ConsolePages.url(id);
    }
}
