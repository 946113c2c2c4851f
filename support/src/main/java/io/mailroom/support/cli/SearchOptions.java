package io.mailroom.support.cli;

import io.mailroom.support.SupportParams;
import picocli.CommandLine.Option;

import java.util.HashMap;
import java.util.Map;

/** The search filters of {@code emails} and {@code bulk} (beside --about, --status and the times). */
final class SearchOptions {

    @Option(names = "--recipient", paramLabel = "ADDRESS", description = "sent to this address (any case)")
    String recipient;

    @Option(names = "--domain", paramLabel = "DOMAIN", description = "sent to an address at this domain")
    String domain;

    @Option(names = "--topic", paramLabel = "TOPIC", description = "of this topic, e.g. email.password_reset")
    String topic;

    @Option(names = "--template", paramLabel = "NAME", description = "rendered from this template")
    String template;

    @Option(names = "--delivery", paramLabel = "STATE", description = "delivered, deferred, bounced or complained")
    String delivery;

    @Option(names = "--key", paramLabel = "KEY", description = "this idempotency key")
    String key;

    @Option(names = "--key-prefix", paramLabel = "PREFIX", description = "keys starting with this")
    String keyPrefix;

    @Option(names = "--provider-id", paramLabel = "ID", description = "the provider's message id")
    String providerId;

    @Option(names = "--error", paramLabel = "WORDS", description = "words of the last error")
    String error;

    @Option(names = "--tag", paramLabel = "NAME=VALUE", description = "sent with this tag, e.g. category=invoice")
    String tag;

    boolean any() {
        return tag != null || recipient != null || domain != null || topic != null || template != null || delivery != null || key != null
                || keyPrefix != null || providerId != null || error != null;
    }

    /** The given filters as request parameters (a mutable map, for the caller to add to). */
    Map<String, String> params() {
        Map<String, String> p = new HashMap<>();
        p.put(SupportParams.RECIPIENT, recipient);
        p.put(SupportParams.DOMAIN, domain);
        p.put(SupportParams.TOPIC, topic);
        p.put(SupportParams.TEMPLATE, template);
        p.put(SupportParams.DELIVERY, delivery);
        p.put(SupportParams.KEY, key);
        p.put(SupportParams.KEY_PREFIX, keyPrefix);
        p.put(SupportParams.PROVIDER_MESSAGE_ID, providerId);
        p.put(SupportParams.ERROR, error);
        p.put(SupportParams.TAG, tag);
        return p;
    }
}
