/**
 * A command line or environment the program refuses. The message is one line naming the flag
 * (and variable) and the accepted values; `exitCode` is always 2, as for Go's flag package.
 *
 * Its own module, so that what refuses a configuration (the kubeconfig source as well as the
 * flag parser) can throw it without loading the flag parser and everything it names.
 */
export class ConfigError extends Error {
  readonly exitCode = 2;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConfigError";
  }
}
