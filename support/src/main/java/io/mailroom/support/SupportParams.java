package io.mailroom.support;

/** Names of the request parameters, as the API, the console and error messages spell them. */
public final class SupportParams {

    public static final String ORDER_ID = "orderId";
    public static final String ABOUT_TYPE = "type";
    public static final String ABOUT_ID = "id";
    public static final String KEY = "key";
    public static final String STATUS = "status";
    public static final String SINCE = "since";
    public static final String UNTIL = "until";
    public static final String OLDER_THAN = "olderThan";
    public static final String CURSOR = "cursor";
    public static final String LIMIT = "limit";
    public static final String REASON = "reason";
    public static final String PROVIDER_MESSAGE_ID = "providerMessageId";
    public static final String SCOPE = "scope";
    public static final String DELIVERY = "delivery";
    public static final String BEFORE = "before";
    public static final String ADDRESS = "address";
    public static final String LIFTED = "lifted";
    public static final String RECIPIENT = "recipient";
    public static final String DOMAIN = "domain";
    public static final String TOPIC = "topic";
    public static final String TEMPLATE = "template";
    /** A tag the email was sent with, {@code name=value}. */
    public static final String TAG = "tag";
    public static final String KEY_PREFIX = "keyPrefix";
    public static final String ERROR = "error";
    public static final String ABOUT = "about";
    public static final String RANGE = "range";

    private SupportParams() {
    }
}
