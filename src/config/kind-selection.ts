/**
 * Which managed kinds the operator runs (`--controllers`), in kube-controller-manager's syntax: a
 * comma-separated list where `*` stands for every kind, `name` enables the kind of that name and
 * `-name` disables it. The names are the kinds' controller names (`ec2instance`, `s3bucket`,
 * `sqsqueue`), as the `controller` label of the metrics spells them.
 */
import { ValueError } from "./values.ts";

/**
 * The kinds `text` enables, in the order of `names` (the registry's). A disable wins over `*` and
 * over an enable of the same name, whatever the order; without `*` only the names listed run.
 * Empty text (or only spaces and commas) is `*`.
 * @throws ValueError on a name not in `names`, or when no kind is left enabled.
 */
export function parseKindSelection(text: string, names: readonly string[]): readonly string[] {
  const accepted = `a comma-separated list of ${names.join(", ")}, * (every kind) and -<name> (all but that one)`;
  const items = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (items.length === 0) return [...names];
  const enabled = new Set<string>();
  const disabled = new Set<string>();
  let all = false;
  for (const item of items) {
    if (item === "*") {
      all = true;
      continue;
    }
    const off = item.startsWith("-");
    const name = off ? item.slice(1) : item;
    if (!names.includes(name)) throw new ValueError(`${accepted}; ${JSON.stringify(name)} is no kind`);
    (off ? disabled : enabled).add(name);
  }
  const out = names.filter((n) => (all || enabled.has(n)) && !disabled.has(n));
  if (out.length === 0) {
    const hint = !all && enabled.size === 0 ? " (-<name> removes a kind from those * enables: write *,-<name>)" : "";
    throw new ValueError(`${accepted} that leaves at least one kind enabled${hint}`);
  }
  return out;
}
