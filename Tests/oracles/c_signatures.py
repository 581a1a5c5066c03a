#!/usr/bin/env python3
"""Checks Swift's hand-typed signatures of C functions loaded with dlopen against the C headers.

Standard input: JSON [{"symbol": "secret_password_free", "swift": "@convention(c) (...) -> ..."}].
Arguments: the clang to parse with, then pkg-config package names, then `--`, then the headers to include.
Clang parses the headers (its JSON AST); each function's return and parameter types, typedefs followed to the end,
are reduced to what the x86-64 and arm64 calling conventions see: a pointer, an integer of 1, 2, 4 or 8 bytes, a
float or double, void, or a struct passed by value. The Swift types are reduced the same way. Prints JSON: a list
of mismatches, one line each, empty when every signature agrees.
"""
import json
import re
import subprocess
import sys

SWIFT_SCALARS = {
    "Swift.Int8": "int1", "Swift.UInt8": "int1", "Swift.Bool": "int1",
    "Swift.Int16": "int2", "Swift.UInt16": "int2",
    "Swift.Int32": "int4", "Swift.UInt32": "int4",
    "Swift.Int64": "int8", "Swift.UInt64": "int8", "Swift.Int": "int8", "Swift.UInt": "int8",
    "Swift.Float": "float", "Swift.Double": "double", "()": "void",
}

C_SCALARS = {
    "char": "int1", "signed char": "int1", "unsigned char": "int1", "_Bool": "int1",
    "short": "int2", "unsigned short": "int2",
    "int": "int4", "unsigned int": "int4",
    "long": "int8", "unsigned long": "int8", "long long": "int8", "unsigned long long": "int8",
    "float": "float", "double": "double", "void": "void",
}


def split_top(text):
    """Splits `text` at commas outside (), <> and [] (the `>` of `->` closes nothing)."""
    parts, depth, current = [], 0, ""
    for index, char in enumerate(text):
        if char in "(<[":
            depth += 1
        elif char in ")]" or (char == ">" and text[index - 1] != "-"):
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def swift_class(type_text):
    type_text = type_text.strip()
    optional = re.fullmatch(r"Swift\.Optional<(.*)>", type_text)
    if optional:
        type_text = optional.group(1)
    if type_text.startswith(("Swift.Unsafe", "Swift.OpaquePointer", "@convention(c)")):
        return "pointer"
    return SWIFT_SCALARS.get(type_text, "unknown Swift type " + type_text)


def swift_signature(text):
    """(return class, [parameter classes]) of `@convention(c) (A, B) -> R`."""
    text = text.strip()
    optional = re.fullmatch(r"Swift\.Optional<(.*)>", text)
    if optional:
        text = optional.group(1)
    prefix = "@convention(c) ("
    if not text.startswith(prefix):
        raise ValueError("not a C function type: " + text)
    depth, index = 1, len(prefix)
    while depth:
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        index += 1
    parameters = split_top(text[len(prefix):index - 1])
    result = text[index:].strip()
    if not result.startswith("->"):
        raise ValueError("no result in " + text)
    return swift_class(result[2:]), [swift_class(parameter) for parameter in parameters]


def c_class(type_text, typedefs, seen=()):
    text = re.sub(r"\b(const|volatile|restrict|__restrict)\b", "", type_text).strip()
    text = re.sub(r"\s+", " ", text)
    if "*" in text or "(" in text or "[" in text:
        return "pointer"
    if text.startswith("enum "):
        return "int4"
    if text.startswith(("struct ", "union ")):
        return "struct " + text
    if text in C_SCALARS:
        return C_SCALARS[text]
    if text in typedefs and text not in seen:
        return c_class(typedefs[text], typedefs, seen + (text,))
    return "unknown C type " + text


def c_signature(declaration, typedefs):
    """(return class, [parameter classes], variadic) of a FunctionDecl."""
    function_type = declaration["type"]["qualType"]
    result = function_type[:function_type.index("(")].strip()
    parameters = [inner["type"]["qualType"] for inner in declaration.get("inner", []) if inner["kind"] == "ParmVarDecl"]
    return c_class(result, typedefs), [c_class(parameter, typedefs) for parameter in parameters], declaration.get("variadic", False)


def main():
    clang = sys.argv[1]
    separator = sys.argv.index("--")
    packages, headers = sys.argv[2:separator], sys.argv[separator + 1:]
    wanted = json.load(sys.stdin)
    flags = subprocess.run(["pkg-config", "--cflags"] + packages, check=True, capture_output=True, text=True).stdout.split()
    source = "".join(f"#include <{header}>\n" for header in headers)
    dump = subprocess.run(
        [clang, "-x", "c", "-fsyntax-only", "-Xclang", "-ast-dump=json"] + flags + ["-"],
        input=source, check=True, capture_output=True, text=True).stdout
    unit = json.loads(dump)
    typedefs, functions = {}, {}
    for declaration in unit.get("inner", []):
        if declaration.get("kind") == "TypedefDecl":
            typedefs[declaration["name"]] = declaration["type"]["qualType"]
        elif declaration.get("kind") == "FunctionDecl":
            functions.setdefault(declaration["name"], declaration)
    mismatches = []
    for entry in wanted:
        symbol = entry["symbol"]
        if symbol not in functions:
            mismatches.append(f"{symbol}: not declared in {', '.join(headers)}")
            continue
        c_result, c_parameters, variadic = c_signature(functions[symbol], typedefs)
        swift_result, swift_parameters = swift_signature(entry["swift"])
        if variadic:
            mismatches.append(f"{symbol}: variadic in C, which Swift cannot call through a plain function pointer")
        if (c_result, c_parameters) != (swift_result, swift_parameters):
            mismatches.append(
                f"{symbol}: C {functions[symbol]['type']['qualType']} is ({', '.join(c_parameters)}) -> {c_result}; "
                f"Swift {entry['swift']} is ({', '.join(swift_parameters)}) -> {swift_result}")
    print(json.dumps(mismatches))


if __name__ == "__main__":
    main()
