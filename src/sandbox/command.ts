import type { CommandModule } from 'yargs';

export const sandboxCommand: CommandModule = {
  command: 'sandbox',
  describe: 'Start the reference report dump service',
  handler: () => {
    throw new Error('not built yet');
  },
};
