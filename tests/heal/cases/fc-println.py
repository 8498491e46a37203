System.out.println('hi')
