package io.mailroom.orders;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * A request to record that an order has been handed to a carrier ({@code POST /orders/{id}/shipment}).
 * Like {@link PlaceOrder}, a plain carrier for what the client sent; {@link #validate()} names the
 * first offending field. The limits mirror the {@code order_shipment} CHECK constraints.
 *
 * @param carrier        who carries the parcel, 1 to {@value #MAX_TEXT_LENGTH} characters
 * @param trackingNumber the carrier's parcel number, 1 to {@value #MAX_TEXT_LENGTH} characters
 * @param trackingUrl    optional: where the customer follows the parcel, an absolute {@code https} URL
 *                       of at most {@value #MAX_URL_LENGTH} characters (it becomes a link in the email)
 */
public record ShipOrder(String carrier, String trackingNumber, String trackingUrl) {

    public static final int MAX_TEXT_LENGTH = 100;
    public static final int MAX_URL_LENGTH = 2000;

    /** @throws InvalidOrderException naming the offending field */
    public void validate() {
        PlaceOrder.requireText("carrier", carrier, MAX_TEXT_LENGTH);
        PlaceOrder.requireText("trackingNumber", trackingNumber, MAX_TEXT_LENGTH);
        if (trackingUrl == null) {
            return;
        }
        String field = "trackingUrl";
        if (trackingUrl.length() > MAX_URL_LENGTH) {
            throw new InvalidOrderException(field, field + " must be at most " + MAX_URL_LENGTH + " characters");
        }
        URI uri;
        try {
            // the single-argument constructor refuses spaces, control characters and anything else unquoted
            uri = new URI(trackingUrl);
        } catch (URISyntaxException e) {
            throw new InvalidOrderException(field, field + " is not a valid URL");
        }
        // compared exactly, so that "HTTPS://" or "https:/x" cannot slip past the CHECK's '^https://'
        if (!"https".equals(uri.getScheme()) || !trackingUrl.startsWith("https://") || uri.getHost() == null
                || uri.getRawUserInfo() != null) {
            throw new InvalidOrderException(field, field + " must be an https:// URL with a host, e.g. https://track.example.com/AB123");
        }
        for (int i = 0; i < trackingUrl.length(); i++) {
            char c = trackingUrl.charAt(i);
            if (c <= 0x20 || c >= 0x7F) {
                throw new InvalidOrderException(field, field + " must be ASCII without spaces (percent-encode the rest)");
            }
        }
    }
}
