package io.mailroom.email.service;

import io.mailroom.email.config.TransportChain;
import io.mailroom.email.resilience.FallbackTransport;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.capture.CaptureTransport;
import io.mailroom.email.transport.http.HttpMailTransport;
import io.mailroom.email.transport.smtp.SmtpConfig;
import io.mailroom.email.transport.smtp.SmtpTransport;

import javax.sql.DataSource;
import java.util.List;
import java.util.Map;

/**
 * Which transport object a name or a fallback list stands for: {@code smtp}, {@code http} and
 * {@code capture} are made once each (and wrapped in their own policies by the caller); a list such
 * as {@code smtp,http} is a {@link FallbackTransport} over those same objects, so each provider keeps
 * one breaker whichever topics send through it.
 */
final class TransportRoutes {

    private TransportRoutes() {
    }

    /** The transport called {@code name}, unwrapped. */
    static MailTransport raw(String name, ServiceConfig config, DataSource reservations) {
        return switch (name) {
            case "smtp" -> new SmtpTransport(config.smtp());
            case "http" -> new HttpMailTransport(config.http());
            // the message SMTP would send, built by SMTP's own code: with the SMTP settings when there
            // are some (Message-ID domain), else with the default sender; no connection is ever opened
            case TransportChain.CAPTURE -> new CaptureTransport(new SmtpTransport(config.smtp() != null ? config.smtp()
                    : SmtpConfig.builder().from(config.mail().from()).build()), reservations);
            default -> throw new IllegalArgumentException("no transport '" + name + "'");
        };
    }

    /** What a topic sending through {@code chain} calls: the transport itself, or a fallback over several. */
    static MailTransport sender(String chain, Map<String, ResilientTransport> transports, FallbackTransport.Listener failover) {
        List<String> names = TransportChain.parse(chain);
        if (names.size() == 1) {
            return transports.get(chain);
        }
        return new FallbackTransport(names.stream().map(transports::get).toList(), failover);
    }
}
