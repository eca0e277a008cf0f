// A refusal in a gateway's own shape: an HTTP status and {code, message}. Both sandboxes (Danal's, Toss's) answer
// their calls with it; what the codes are is each gateway's.
export class SandboxError extends Error {
  readonly statusCode: number;
  readonly code: string;
  constructor(statusCode: number, code: string, message: string) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
  }
}
