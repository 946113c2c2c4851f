package io.mailroom.support.cli;

import io.mailroom.support.Actor;
import io.mailroom.support.ControlState;
import io.mailroom.support.SupportService;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "resume", mixinStandardHelpOptions = true, description = "Resume sending after a pause.")
final class ResumeCommand extends SwitchCommand {

    @Option(names = "--reason", paramLabel = "TEXT", description = "why (kept in the audit log)")
    String reason;

    @Override
    ControlState set(SupportService service, Actor actor) {
        return service.resume(actor, scope, reason);
    }
}
