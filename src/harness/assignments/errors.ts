/** Bad input to an assignment (a goal, a limit, a contract, an id): one line naming the problem. */
export class AssignmentInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AssignmentInputError";
  }
}
