package io.mailroom.support.cli;

import io.mailroom.support.Actor;
import io.mailroom.support.ControlState;
import io.mailroom.support.SupportService;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "pause", mixinStandardHelpOptions = true,
        description = "Pause sending: every dispatcher stops taking new emails within seconds.")
final class PauseCommand extends SwitchCommand {

    @Option(names = "--reason", paramLabel = "TEXT", description = "why (shown to others and kept in the audit log)")
    String reason;

    @Override
    ControlState set(SupportService service, Actor actor) {
        return service.pause(actor, scope, reason);
    }
}
