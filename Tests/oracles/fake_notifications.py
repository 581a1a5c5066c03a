"""A stand-in desktop notification server for tests: owns org.freedesktop.Notifications on the session bus (run it
under `dbus-run-session`), answers Notify with an id, and appends each call's (app, summary, body) as one JSON line
to the file given as the first argument. Written with jeepney (pure Python), no code shared with Coffer.

Usage: fake_notifications.py OUT.jsonl READY_FILE
"""

import json
import sys

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_return
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


def main():
    out_path, ready_path = sys.argv[1], sys.argv[2]
    connection = open_dbus_connection(bus="SESSION")
    reply = connection.send_and_get_reply(message_bus.RequestName(NAME, 4))
    if reply.body[0] != 1:
        sys.exit("could not own " + NAME)
    with open(ready_path, "w") as ready:
        ready.write("ready\n")
    next_id = 1
    while True:
        message = connection.receive()
        header = message.header
        if header.message_type != MessageType.method_call:
            continue
        member = header.fields.get(HeaderFields.member)
        if member == "Notify":
            app, replaces, icon, summary, body, actions, hints, timeout = message.body
            with open(out_path, "a") as out:
                out.write(json.dumps({"app": app, "replaces": replaces, "summary": summary, "body": body,
                                      "timeout": timeout}) + "\n")
            connection.send(new_method_return(message, "u", (next_id,)))
            next_id += 1
        elif member == "GetServerInformation":
            connection.send(new_method_return(message, "ssss", ("fake", "coffer-tests", "1", "1.2")))
        else:
            connection.send(new_method_return(message))


if __name__ == "__main__":
    main()
