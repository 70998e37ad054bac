"""Test peer for the Secret Service tests: a second, different program next to authkit.

Runs against the private bus in $DBUS_SESSION_BUS_ADDRESS (never a real user's keyring:
the Swift harness and scripts/with-private-keyring set it). Subcommands:

  create-collection LABEL PASSWORD   gnome-keyring's CreateWithMasterPassword (test setup only)
  lock LABEL                         lock the collection with that label
  unlock LABEL PASSWORD              gnome-keyring's UnlockWithMasterPassword (test setup only: no prompt)
  count-collections LABEL            print how many collections carry LABEL
  unreadable-items                   print the items collections list but whose properties cannot be read
  hang                               own org.freedesktop.secrets and never answer
  write-item LABEL HEX-SECRET K=V... store an item in the default collection (secretstorage)
  read K=V...                        print the matching items as JSON (secretstorage)
  delete K=V...                      delete the matching items (secretstorage)
"""
import json
import sys

from jeepney import DBusAddress, new_method_call
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

SERVICE = DBusAddress(
    "/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service"
)
LABEL_PROPERTY = "org.freedesktop.Secret.Collection.Label"


def call(conn, address, method, signature=None, body=()):
    reply = conn.send_and_get_reply(new_method_call(address, method, signature, body), timeout=10)
    if reply.header.message_type.name == "error":
        raise SystemExit(f"{method} failed: {reply.header.fields} {reply.body}")
    return reply.body


def collections_by_label(conn, label):
    props = DBusAddress(SERVICE.object_path, bus_name=SERVICE.bus_name, interface="org.freedesktop.DBus.Properties")
    (_, paths), = call(conn, props, "Get", "ss", (SERVICE.interface, "Collections"))
    found = []
    for path in paths:
        collection = DBusAddress(path, bus_name=SERVICE.bus_name, interface="org.freedesktop.DBus.Properties")
        (_, value), = call(conn, collection, "Get", "ss", ("org.freedesktop.Secret.Collection", "Label"))
        if value == label:
            found.append(path)
    return found


def attributes(pairs):
    result = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        result[key] = value
    return result


def main(argv):
    command, args = argv[1], argv[2:]
    if command == "hang":
        conn = open_dbus_connection(bus="SESSION")
        call(conn, message_bus, "RequestName", "su", ("org.freedesktop.secrets", 4))
        print("ready", flush=True)
        while True:  # receive and never answer
            conn.receive()
    conn = open_dbus_connection(bus="SESSION")
    if command == "create-collection":
        label, password = args
        _, session = call(conn, SERVICE, "OpenSession", "sv", ("plain", ("s", "")))
        guilt = DBusAddress(
            SERVICE.object_path, bus_name=SERVICE.bus_name,
            interface="org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface")
        (path,) = call(conn, guilt, "CreateWithMasterPassword", "a{sv}(oayays)",
                       ({LABEL_PROPERTY: ("s", label)}, (session, b"", password.encode(), "text/plain")))
        print(path)
    elif command == "lock":
        paths = collections_by_label(conn, args[0])
        call(conn, SERVICE, "Lock", "ao", (paths,))
        print(json.dumps(paths))
    elif command == "unlock":
        label, password = args
        _, session = call(conn, SERVICE, "OpenSession", "sv", ("plain", ("s", "")))
        guilt = DBusAddress(
            SERVICE.object_path, bus_name=SERVICE.bus_name,
            interface="org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface")
        paths = collections_by_label(conn, label)
        for path in paths:
            call(conn, guilt, "UnlockWithMasterPassword", "o(oayays)", (path, (session, b"", password.encode(), "text/plain")))
        print(json.dumps(paths))
    elif command == "unreadable-items":
        props = DBusAddress(SERVICE.object_path, bus_name=SERVICE.bus_name, interface="org.freedesktop.DBus.Properties")
        (_, collections), = call(conn, props, "Get", "ss", (SERVICE.interface, "Collections"))
        unreadable = []
        for collection in collections:
            address = DBusAddress(collection, bus_name=SERVICE.bus_name, interface="org.freedesktop.DBus.Properties")
            (_, items), = call(conn, address, "Get", "ss", ("org.freedesktop.Secret.Collection", "Items"))
            for item in items:
                item_address = DBusAddress(item, bus_name=SERVICE.bus_name, interface="org.freedesktop.DBus.Properties")
                reply = conn.send_and_get_reply(new_method_call(item_address, "GetAll", "s", ("org.freedesktop.Secret.Item",)), timeout=10)
                if reply.header.message_type.name == "error":
                    unreadable.append(item)
        print(json.dumps(unreadable))
    elif command == "count-collections":
        print(len(collections_by_label(conn, args[0])))
    elif command in ("write-item", "read", "delete"):
        import secretstorage
        ss = secretstorage.dbus_init()
        if command == "write-item":
            label, secret_hex, pairs = args[0], args[1], args[2:]
            collection = secretstorage.get_default_collection(ss)
            collection.create_item(label, attributes(pairs), bytes.fromhex(secret_hex), replace=False,
                                   content_type="text/plain")
        elif command == "read":
            items = []
            for item in secretstorage.search_items(ss, attributes(args)):
                entry = {"label": item.get_label(), "attributes": item.get_attributes(), "locked": item.is_locked()}
                if not item.is_locked():
                    entry["secret"] = item.get_secret().decode("utf-8", "replace")
                items.append(entry)
            print(json.dumps(items))
        else:
            count = 0
            for item in secretstorage.search_items(ss, attributes(args)):
                item.delete()
                count += 1
            print(count)
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv)
