"""Bus monitor peer: prints every method call on the private test bus, one JSON line each.

Runs against $DBUS_SESSION_BUS_ADDRESS (the tests' private dbus-daemon, whose config allows
monitoring; never a real session). Becomes a monitor (org.freedesktop.DBus.Monitoring), prints
`ready`, then one line per call: {"interface", "member", "path", "sender", "destination", "arg0"}
(arg0: a first string argument, which tests use as a marker), so tests count CreateCollection,
Unlock and Prompt calls made by real programs.
"""
import json
import sys

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection

MONITORING = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus.Monitoring")


def main():
    conn = open_dbus_connection(bus="SESSION")
    reply = conn.send_and_get_reply(new_method_call(MONITORING, "BecomeMonitor", "asu", (["type='method_call'"], 0)), timeout=10)
    if reply.header.message_type == MessageType.error:
        raise SystemExit(f"BecomeMonitor failed: {reply.body}")
    print("ready", flush=True)
    while True:
        message = conn.receive()
        if message.header.message_type != MessageType.method_call:
            continue
        fields = message.header.fields
        print(json.dumps({
            "interface": fields.get(HeaderFields.interface, ""), "member": fields.get(HeaderFields.member, ""),
            "path": fields.get(HeaderFields.path, ""), "sender": fields.get(HeaderFields.sender, ""),
            "destination": fields.get(HeaderFields.destination, ""),
            "arg0": message.body[0] if message.body and isinstance(message.body[0], str) else "",
        }), flush=True)


if __name__ == "__main__":
    sys.exit(main())
